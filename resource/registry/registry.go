// Package registry is the one list of resources the server is built from:
// cmd/pmapi and the API tests hand Resources to api.New. Adding a resource
// adds one line here (docs/architecture.md).
package registry

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/event"
	"github.com/pmapi/pmapi/facet"
	"github.com/pmapi/pmapi/internal/seal"
	"github.com/pmapi/pmapi/resource/actionitem"
	"github.com/pmapi/pmapi/resource/note"
	"github.com/pmapi/pmapi/resource/project"
	"github.com/pmapi/pmapi/resource/risk"
	"github.com/pmapi/pmapi/resource/rrca"
	"github.com/pmapi/pmapi/resource/search"
	"github.com/pmapi/pmapi/resource/task"
	"github.com/pmapi/pmapi/resource/webhook"
	"github.com/pmapi/pmapi/tenant"
)

// Deps is what the resources need from the rest of the server, each named
// for what it does (no finding one by asserting the type of another).
type Deps struct {
	// Events records change events in the changing transaction (jobs.Clients).
	Events event.Emitter
	// RRCAJobs queues similarity and suggestion work; nil queues nothing (the
	// in-process admin tool never touches analyses).
	RRCAJobs rrca.Jobs
	// WebhookJobs queues and cancels subscriptions' retry jobs; nil queues nothing.
	WebhookJobs webhook.Jobs
	// SecretBox seals webhook signing secrets (PMAPI_SECRET_KEY).
	SecretBox *seal.Box
	// WebhookSender sends test deliveries; nil builds the production one.
	WebhookSender *webhook.Sender
	// WebhookAttempt sends a test delivery through the sender (jobs.Attempt);
	// nil refuses the test operation.
	WebhookAttempt webhook.Attempter
	// WebhookAllowLoopback lets subscriptions name loopback URLs (tests, dev).
	WebhookAllowLoopback bool
	// WebhookLoopbackHTTP also takes plain http:// loopback URLs (pmapi dev).
	WebhookLoopbackHTTP bool
	// Resolver resolves webhook hosts at subscription time; nil is the system's.
	Resolver webhook.Resolver
}

// Resources is every resource, in the order their scopes are listed. The
// order is also the order of search types and of a project delete's cascade.
func Resources(d Deps) ([]api.Resource, error) {
	if d.Events == nil {
		return nil, errors.New("registry: Deps.Events is required")
	}
	if d.SecretBox == nil {
		return nil, errors.New("registry: Deps.SecretBox is required")
	}
	if d.RRCAJobs == nil {
		d.RRCAJobs = noJobs{}
	}
	if d.WebhookJobs == nil {
		d.WebhookJobs = noJobs{}
	}
	if d.Resolver == nil {
		d.Resolver = net.DefaultResolver
	}
	if d.WebhookSender == nil {
		sender, err := webhook.NewSender(d.WebhookAllowLoopback, "")
		if err != nil {
			return nil, err
		}
		d.WebhookSender = sender
	}
	if d.WebhookAttempt == nil {
		d.WebhookAttempt = noAttempt
	}
	items := actionitem.Store{Events: d.Events, Detach: rrca.DetachActionItems}
	return []api.Resource{
		project.Resource(project.Store{Events: d.Events}),
		task.Resource(task.Store{Events: d.Events}),
		risk.Resource(risk.Store{Events: d.Events}),
		actionitem.Resource(items),
		rrca.Resource(rrca.Store{Events: d.Events, Jobs: d.RRCAJobs, ActionItems: items, Sources: RRCASources()}),
		note.Resource(note.Store{Events: d.Events}),
		webhook.Resource(webhook.HTTPDeps{Store: webhook.Store{Events: d.Events, Jobs: d.WebhookJobs, Box: d.SecretBox},
			Sender: d.WebhookSender, Attempt: d.WebhookAttempt, Resolver: d.Resolver, AllowLoopback: d.WebhookAllowLoopback,
			LoopbackHTTP: d.WebhookLoopbackHTTP}),
		search.Resource(),
	}, nil
}

// RRCASources are the other resources' rows analyses read, as each resource
// describes itself to search: risks and tasks as suggestion candidates, in
// that order, projects for look-across's grouping and action items for
// corrective actions. cmd/pmapi hands the workers the same (jobs.Options).
func RRCASources() rrca.Sources {
	return rrca.Sources{Candidates: []facet.Search{risk.SearchSource, task.SearchSource},
		Projects: project.SearchSource, ActionItems: actionitem.SearchSource}
}

// noJobs queues nothing: for in-process tools (pmapi admin) that never touch
// analyses or deliveries.
type noJobs struct{}

func (noJobs) Similarity(context.Context, pgx.Tx, *tenant.Shard, uuid.UUID, uuid.UUID) error {
	return nil
}
func (noJobs) Suggest(context.Context, pgx.Tx, *tenant.Shard, uuid.UUID, uuid.UUID) error { return nil }
func (noJobs) Retry(context.Context, pgx.Tx, *tenant.Shard, uuid.UUID, uuid.UUID, time.Time, bool) (int64, error) {
	return 0, nil
}
func (noJobs) Cancel(context.Context, pgx.Tx, *tenant.Shard, []int64) error { return nil }

func noAttempt(
	context.Context,
	webhook.Store,
	*webhook.Sender,
	webhook.Delivery,
	webhook.Subscription,
) (webhook.Result, error) {
	return webhook.Result{}, errors.New(
		"webhook test deliveries need the job runner's sender (registry.Deps.WebhookAttempt)",
	)
}
