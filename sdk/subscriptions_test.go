package pmapisdk_test

import (
	"context"
	"slices"
	"testing"

	"github.com/oapi-codegen/nullable"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
	pmapisdk "github.com/pmapi/pmapi/sdk"
)

// TestSDKManagesTheAppsOwnSubscriptions drives the key's subscription
// operations: create with a project filter, read, list, change the URL and
// clear the filter, refuse a URL the server refuses, and delete.
func TestSDKManagesTheAppsOwnSubscriptions(t *testing.T) {
	t.Parallel()
	rcv := apitest.NewReceiver(t)
	env := apitest.Reaching(t, rcv, false)
	base, tn := env.Listen(t), env.NewTenant(t)
	ctx := context.Background()
	c, err := pmapisdk.New(base, tn.ClientID, pmapisdk.APIKey(tn.Key))
	if err != nil {
		t.Fatal(err)
	}
	prj := tn.CreateProject(t, map[string]any{"name": "hooked"})["id"].(string)

	cr, err := c.CreateWebhookSubscriptionWithResponse(ctx, &pmapisdk.CreateWebhookSubscriptionParams{},
		pmapisdk.WebhookCreateRequest{Url: rcv.URL + "/a", Events: []string{"task.created"},
			ProjectIds: nullable.NewNullableWithValue([]string{prj})})
	must(t, "create", cr, cr.Body, err)
	created := cr.JSON201.Data
	if got, _ := created.ProjectIds.Get(); created.Id == nil || created.ClientId == nil ||
		*created.ClientId != tn.ClientID || !slices.Equal(got, []string{prj}) || created.Secret == "" {
		t.Fatalf("created %s", cr.Body)
	}
	id := *created.Id

	g, err := c.GetWebhookSubscriptionWithResponse(ctx, id, &pmapisdk.GetWebhookSubscriptionParams{})
	must(t, "get", g, g.Body, err)
	l, err := c.ListWebhookSubscriptionsWithResponse(ctx, &pmapisdk.ListWebhookSubscriptionsParams{})
	must(t, "list", l, l.Body, err)
	if g.JSON200.Data.Url != rcv.URL+"/a" || len(l.JSON200.Data.Items) != 1 || l.JSON200.Data.Items[0].Id != id {
		t.Errorf("get %s, list %s", g.Body, l.Body)
	}

	url := rcv.URL + "/b"
	tag := g.HTTPResponse.Header.Get("ETag")
	u, err := c.UpdateWebhookSubscriptionWithResponse(ctx, id, &pmapisdk.UpdateWebhookSubscriptionParams{IfMatch: &tag},
		pmapisdk.WebhookUpdateRequest{Url: &url, ProjectIds: nullable.NewNullNullable[[]string]()})
	must(t, "update", u, u.Body, err)
	if u.JSON200.Data.Url != url || !u.JSON200.Data.ProjectIds.IsNull() ||
		!slices.Equal(u.JSON200.Data.Events, []string{"task.created"}) {
		t.Errorf("updated %s", u.Body)
	}
	// The tag the update was made against is stale now: the same update is refused.
	stale, err := c.UpdateWebhookSubscriptionWithResponse(ctx, id,
		&pmapisdk.UpdateWebhookSubscriptionParams{IfMatch: &tag}, pmapisdk.WebhookUpdateRequest{Url: &url})
	if err != nil || stale.JSON412 == nil || stale.JSON412.Error.Code != pmapisdk.ErrorCodePreconditionFailed {
		t.Errorf("update with a stale If-Match: %v %s", err, stale.Body)
	}
	metadata := "https://169.254.169.254/latest"
	bad, err := c.UpdateWebhookSubscriptionWithResponse(ctx, id, &pmapisdk.UpdateWebhookSubscriptionParams{},
		pmapisdk.WebhookUpdateRequest{Url: &metadata})
	if err != nil || bad.JSON400 == nil || bad.JSON400.Error.Code != pmapisdk.ErrorCodeUrlNotAllowed {
		t.Errorf("update to the metadata address: %v %s", err, bad.Body)
	}

	d, err := c.DeleteWebhookSubscriptionWithResponse(ctx, id)
	must(t, "delete", d, d.Body, err)
	if d.JSON200.Data.Status != pmapisdk.AppStatusDisabled {
		t.Errorf("deleted %s", d.Body)
	}
}
