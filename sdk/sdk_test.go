package pmapisdk_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/oapi-codegen/nullable"

	"github.com/pmapi/pmapi/internal/testkit/apitest"
	pmapisdk "github.com/pmapi/pmapi/sdk"
)

// server serves a fresh app on loopback with a tenant (every scope); the
// OAuth polling interval is a second.
func server(t *testing.T) (*apitest.Env, string, *apitest.Tenant) {
	t.Helper()
	env := apitest.New(t, func(d *apitest.Config) { d.OAuth.Interval = time.Second })
	return env, env.Listen(t), env.NewTenant(t)
}

// must fails the test on a failure answer, naming its code.
func must(t *testing.T, what string, r pmapisdk.Response, body []byte, err error) {
	t.Helper()
	if err == nil {
		err = pmapisdk.Check(r, body)
	}
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func TestSDKDrivesTheServer(t *testing.T) {
	t.Parallel()
	_, base, tn := server(t)
	ctx := context.Background()
	c, err := pmapisdk.New(base, tn.ClientID, pmapisdk.APIKey(tn.Key))
	if err != nil {
		t.Fatal(err)
	}

	p, err := c.CreateProjectWithResponse(
		ctx,
		&pmapisdk.CreateProjectParams{},
		pmapisdk.ProjectCreateRequest{Name: "SDK project"},
	)
	must(t, "create project", p, p.Body, err)
	var ids []string
	for _, title := range []string{"first", "second", "third"} {
		r, err := c.CreateTaskWithResponse(
			ctx,
			&pmapisdk.CreateTaskParams{},
			pmapisdk.TaskCreateRequest{ProjectId: p.JSON201.Data.Id, Title: title},
		)
		must(t, "create task", r, r.Body, err)
		if r.JSON201.Data.Status != pmapisdk.TaskStatusTodo {
			t.Errorf("a new task is %s", r.JSON201.Data.Status)
		}
		ids = append(ids, r.JSON201.Data.Id)
	}

	t.Run("pages follow nextCursor", func(t *testing.T) {
		var seen []string
		params := &pmapisdk.ListTasksParams{ProjectId: &p.JSON201.Data.Id, Limit: new(2)}
		for pages := 0; ; pages++ {
			l, err := c.ListTasksWithResponse(ctx, params)
			must(t, "list", l, l.Body, err)
			for _, it := range l.JSON200.Data.Items {
				seen = append(seen, it.Id)
			}
			next, err := l.JSON200.Data.NextCursor.Get()
			if err != nil { // null: the last page
				if pages != 1 {
					t.Errorf("%d pages of 2 for 3 tasks", pages+1)
				}
				break
			}
			params.Cursor = &next
		}
		if strings.Join(seen, ",") != strings.Join([]string{ids[2], ids[1], ids[0]}, ",") {
			t.Errorf("pages gave %v, want the three newest first", seen)
		}
	})

	t.Run("null clears", func(t *testing.T) {
		desc := "to be cleared"
		u, err := c.UpdateTaskWithResponse(
			ctx,
			&pmapisdk.UpdateTaskParams{},
			pmapisdk.TaskUpdateRequest{TaskId: ids[0], Description: nullable.NewNullableWithValue(desc)},
		)
		must(t, "set description", u, u.Body, err)
		u, err = c.UpdateTaskWithResponse(
			ctx,
			&pmapisdk.UpdateTaskParams{},
			pmapisdk.TaskUpdateRequest{TaskId: ids[0], Description: nullable.NewNullNullable[string]()},
		)
		must(t, "clear description", u, u.Body, err)
		if !u.JSON201.Data.Description.IsNull() {
			t.Errorf("description after null: %v", u.JSON201.Data.Description)
		}
	})

	t.Run("errors are typed", func(t *testing.T) {
		review := pmapisdk.TaskStatusReview
		u, err := c.UpdateTaskWithResponse(
			ctx,
			&pmapisdk.UpdateTaskParams{},
			pmapisdk.TaskUpdateRequest{TaskId: ids[1], Status: &review},
		)
		if err != nil {
			t.Fatal(err)
		}
		if u.JSON400 == nil || u.JSON400.Error.Code != pmapisdk.ErrorCodeInvalidTransition {
			t.Fatalf("TODO to REVIEW: %d %s", u.StatusCode(), u.Body)
		}
		var apiErr *pmapisdk.APIError
		if err := pmapisdk.Check(u, u.Body); !errors.As(err, &apiErr) || apiErr.Status != 400 ||
			apiErr.Code != pmapisdk.ErrorCodeInvalidTransition || apiErr.RequestID == "" || apiErr.Details["from"] != "TODO" {
			t.Errorf("Check: %#v", err)
		}
		g, err := c.GetTaskWithResponse(ctx, &pmapisdk.GetTaskParams{Id: "tsk_01JD8X3Q4ZP6V1T9K2M5N7R8S0"})
		if err != nil || g.JSON404 == nil || g.JSON404.Error.Code != pmapisdk.ErrorCodeNotFound {
			t.Errorf("an absent task: %v %d %s", err, g.StatusCode(), g.Body)
		}
		bad, _ := pmapisdk.New(base, tn.ClientID, pmapisdk.APIKey("pmk_not_a_key"))
		r, err := bad.ListProjectsWithResponse(ctx, &pmapisdk.ListProjectsParams{})
		if err != nil || r.JSON401 == nil || r.JSON401.Error.Code != pmapisdk.ErrorCodeInvalidToken {
			t.Errorf("a bad key: %v %d %s", err, r.StatusCode(), r.Body)
		}
	})
}

// TestSDKDeviceLogin logs in through golang.org/x/oauth2's device flow with
// the SDK's configuration and calls the API with the token it got.
func TestSDKDeviceLogin(t *testing.T) {
	t.Parallel()
	_, base, tn := server(t)
	ctx := context.Background()
	conf := pmapisdk.OAuthConfig(base, tn.ClientID, "projects:read")
	da, err := conf.DeviceAuth(ctx)
	if err != nil {
		t.Fatalf("DeviceAuth: %v", err)
	}
	go func() {
		// The user approves on the device page; here, the console API does.
		time.Sleep(1200 * time.Millisecond)
		tn.Console(
			t,
			http.MethodPost,
			"/openapi/v1/oauth/device/approve",
			map[string]any{"user_code": da.UserCode, "action": "approve"},
		)
	}()
	tok, err := conf.DeviceAccessToken(ctx, da)
	if err != nil {
		t.Fatalf("DeviceAccessToken: %v", err)
	}
	c, err := pmapisdk.New(base, tn.ClientID, pmapisdk.Token(conf.TokenSource(ctx, tok)))
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.ListProjectsWithResponse(ctx, &pmapisdk.ListProjectsParams{})
	must(t, "list projects with the token", l, l.Body, err)
	tasks, err := c.ListTasksWithResponse(ctx, &pmapisdk.ListTasksParams{})
	if err != nil || tasks.JSON403 == nil || tasks.JSON403.Error.Code != pmapisdk.ErrorCodeInsufficientScope {
		t.Errorf("a projects:read token lists tasks: %v %d %s", err, tasks.StatusCode(), tasks.Body)
	}
}
