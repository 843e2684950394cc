// Command receiver is the local webhook receiver of docs/webhooks.md: it
// checks each delivery's signature with stripe-go's verifier (pmapi signs as
// Stripe does) and prints the event type, the delivery id and the body.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/stripe/stripe-go/v84/webhook"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:4242", "where to listen")
	flag.Parse()
	secret := os.Getenv("WEBHOOK_SECRET") // the subscription's whsec_..., shown once
	http.HandleFunc("POST /webhook", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sig := r.Header.Get("X-Service-Signature")
		if err := webhook.ValidatePayloadWithTolerance(body, sig, secret, 300*time.Second); err != nil {
			log.Printf("refused a delivery: %v", err)
			http.Error(w, "bad signature", http.StatusBadRequest)
			return
		}
		fmt.Printf("%s %s %s\n", r.Header.Get("X-Service-Event"), r.Header.Get("X-Service-Delivery-Id"), body)
		w.WriteHeader(http.StatusNoContent)
	})
	log.Printf("listening on http://%s/webhook", *addr)
	log.Fatal(http.ListenAndServe(*addr, nil))
}
