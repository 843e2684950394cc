package main

import (
	"context"
	"log/slog"
	"net/http"

	"riverqueue.com/riverui"

	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/jobs"
	"github.com/pmapi/pmapi/tenant"
)

// riverUIHandlers builds one River UI per shard, mounted by the API under
// /admin/river/<shard>/ behind the operator token. Its background services run
// until ctx ends.
func riverUIHandlers(
	ctx context.Context,
	shards *tenant.Shards,
	clients *jobs.Clients,
	log *slog.Logger,
) (map[string]http.Handler, error) {
	out := map[string]http.Handler{}
	for _, sh := range shards.All() {
		h, err := riverui.NewHandler(&riverui.HandlerOpts{
			Endpoints: riverui.NewEndpoints(clients.For(sh.Name), nil),
			Logger:    log.With("component", "riverui", "shard", sh.Name),
			Prefix:    api.RiverUIPrefix + "/" + sh.Name,
		})
		if err != nil {
			return nil, err
		}
		if err := h.Start(ctx); err != nil {
			return nil, err
		}
		out[sh.Name] = h
	}
	return out, nil
}
