// Command receiver is the local webhook receiver of docs/webhooks.md: it
// accepts a delivery only when both of its signatures verify, X-Service-Signature
// with stripe-go's verifier (pmapi signs as Stripe does) and the Standard
// Webhooks headers with that spec's library, and prints the event type, the
// delivery id and the body.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stripe/stripe-go/v84/webhook"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:4242", "where to listen")
	flag.Parse()
	secret := os.Getenv("WEBHOOK_SECRET") // the subscription's whsec_..., shown once
	standard, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		log.Fatalf("WEBHOOK_SECRET: %v", err)
	}
	http.HandleFunc("POST /webhook", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sig := r.Header.Get("X-Service-Signature")
		if err := webhook.ValidatePayloadWithTolerance(body, sig, secret, 300*time.Second); err != nil {
			log.Printf("refused a delivery: X-Service-Signature: %v", err)
			http.Error(w, "bad signature", http.StatusBadRequest)
			return
		}
		// webhook-id, webhook-timestamp (5 minutes' tolerance) and webhook-signature.
		if err := standard.Verify(body, r.Header); err != nil {
			log.Printf("refused a delivery: webhook-signature: %v", err)
			http.Error(w, "bad signature", http.StatusBadRequest)
			return
		}
		fmt.Printf("%s %s %s\n", r.Header.Get("X-Service-Event"), r.Header.Get("X-Service-Delivery-Id"), body)
		w.WriteHeader(http.StatusNoContent)
	})
	log.Printf("listening on http://%s/webhook", *addr)
	log.Fatal(http.ListenAndServe(*addr, nil))
}
