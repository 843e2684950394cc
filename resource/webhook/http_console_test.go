package webhook_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
)

// TestConsoleDeliveryRoutes: a workspace's console session reads an app's
// deliveries (filters, the attempt log) and replays them, as the app's key
// does for itself; another workspace's app, delivery and subscription are
// 404 and its lists show nothing of the first's.
func TestConsoleDeliveryRoutes(t *testing.T) {
	t.Parallel()
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rcv.Close)
	env := apitest.ReachingLoopbackHTTP(t)
	tn, other := env.NewTenant(t), env.NewTenant(t)
	apps := "/openapi/v1/apps/" + tn.ClientID
	sub := tn.Console(t, "POST", apps+"/webhooks", map[string]any{"url": rcv.URL + "/hook", "events": []string{"*"}})
	if sub.Status != 201 {
		t.Fatalf("subscribe: %d %s", sub.Status, sub.Raw)
	}
	subID := sub.Str("id")
	sent := tn.Console(t, "POST", apps+"/webhooks/"+subID+"/test", nil)
	if sent.Status != 201 || sent.Data()["delivered"] != true {
		t.Fatalf("test delivery: %d %s", sent.Status, sent.Raw)
	}
	delivery := sent.Str("deliveryId")

	list := tn.Console(t, "GET", apps+"/deliveries?subscriptionId="+subID+"&status=SUCCEEDED&limit=10", nil)
	if list.Status != 200 || len(list.IDs()) != 1 || list.IDs()[0] != delivery {
		t.Fatalf("list: %d %s", list.Status, list.Raw)
	}
	if r := tn.Console(t, "GET", apps+"/deliveries?status=DEAD", nil); r.Status != 200 || len(r.IDs()) != 0 {
		t.Errorf("filtered list: %d %s", r.Status, r.Raw)
	}
	detail := tn.Console(t, "GET", apps+"/deliveries/"+delivery, nil)
	attempts, _ := detail.Data()["attemptLog"].([]any)
	if detail.Status != 200 || len(attempts) != 1 {
		t.Fatalf("detail: %d %s", detail.Status, detail.Raw)
	}
	replay := tn.Console(t, "POST", apps+"/deliveries/"+delivery+"/replay", nil)
	if replay.Status != 201 || replay.Str("replayOf") != delivery {
		t.Fatalf("replay: %d %s", replay.Status, replay.Raw)
	}
	bulk := tn.Console(
		t,
		"POST",
		apps+"/deliveries/replay",
		map[string]any{"subscriptionId": subID, "since": "2020-01-01T00:00:00Z"},
	)
	if bulk.Status != 201 {
		t.Fatalf("bulk replay: %d %s", bulk.Status, bulk.Raw)
	}

	foreign := map[string]string{
		"another workspace's app":         "/openapi/v1/apps/" + tn.ClientID + "/deliveries",
		"another workspace's delivery":    "/openapi/v1/apps/" + other.ClientID + "/deliveries/" + delivery,
		"a delivery under the wrong app":  "/openapi/v1/apps/" + other.ClientID + "/deliveries/" + delivery + "/replay",
		"a malformed delivery id":         "/openapi/v1/apps/" + tn.ClientID + "/deliveries/evt_nonsense",
		"an app that does not exist here": "/openapi/v1/apps/pm_cli_00000000000000000000/deliveries",
	}
	for name, path := range foreign {
		who, method := other, "GET"
		if name == "a malformed delivery id" {
			who = tn
		}
		if name == "a delivery under the wrong app" {
			method = "POST"
		}
		if r := who.Console(t, method, path, nil); r.Status != 404 || r.ErrorCode() != "NOT_FOUND" {
			t.Errorf("%s: %d %s", name, r.Status, r.Raw)
		}
	}
	r := other.Console(t, "POST", "/openapi/v1/apps/"+other.ClientID+"/deliveries/replay",
		map[string]any{"subscriptionId": subID, "since": "2020-01-01T00:00:00Z"})
	if r.Status != 404 {
		t.Errorf("bulk replay of another workspace's subscription: %d %s", r.Status, r.Raw)
	}
	if r := other.Console(t, "GET", "/openapi/v1/apps/"+other.ClientID+"/deliveries", nil); r.Status != 200 ||
		len(r.IDs()) != 0 {
		t.Errorf("another workspace's list: %d %s", r.Status, r.Raw)
	}
}
