package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pmapi/pmapi/internal/rig"
	"github.com/pmapi/pmapi/tenant"
)

// The workspace-per-worker variant of the Citus phase: a second workspace,
// isolated and moved to the worker that does not hold the first, and the
// read and write loops sent half to each, so each worker serves one
// workspace and the per-node CPU shows the load split.

// splitSuffix names the variant's scenarios after the ones they repeat.
const splitSuffix = ", two workspaces"

// baseScenario is the single node's scenario a Citus one compares with.
func baseScenario(name string) string { return strings.TrimSuffix(name, splitSuffix) }

// splitTasks is how many tasks the second workspace gets at most (batch
// endpoint; as many as the first has when that is fewer).
const splitTasks = 2_000

// other is the second workspace of the variant.
type other struct {
	workspaceID string
	node        string
	load        *loadClient
	tasks       []string
	statuses    []string
}

// seedOther makes the second workspace through the admin and console APIs,
// gives it shards of its own on the worker the first workspace is not on
// (the operator's isolate and move), and seeds it with tasks.
func (b *bench) seedOther(ctx context.Context) (*other, error) {
	a := rig.Client{Base: b.base, HTTP: b.client}
	tn, err := rig.NewTenant(ctx, a, b.adminToken, "pmbench-b", allScopes)
	if err != nil {
		return nil, err
	}
	o := &other{workspaceID: tn.WorkspaceID}
	owner, err := pgxpool.New(ctx, b.cl.db.OwnerURL)
	if err != nil {
		return nil, err
	}
	defer owner.Close()
	placer := tenant.NewPlacer(map[string]*pgxpool.Pool{"default": owner})
	first, err := placer.Where(ctx, tenant.Workspace{ID: uuid.MustParse(b.workspaceID), Shard: "default"})
	if err != nil {
		return nil, err
	}
	var to string
	for _, n := range b.cl.nodes[1:] {
		if n != first.Node {
			to = n
		}
	}
	if to == "" {
		return nil, fmt.Errorf("no worker besides %s", first.Node)
	}
	ws := tenant.Workspace{ID: uuid.MustParse(o.workspaceID), Shard: "default"}
	if _, err := placer.Isolate(ctx, ws); err != nil {
		return nil, err
	}
	pl, err := placer.Move(ctx, ws, to)
	if err != nil {
		return nil, err
	}
	o.node = pl.Node
	fmt.Fprintf(b.o.Log, "pmbench: second workspace on %s, the first on %s\n", o.node, first.Node)
	o.load = newLoadClient(b.o.Concurrency, keyHeader(tn.Key))
	const base = "/openapi/v1/resource/"
	p, err := a.Call(ctx, "POST", base+"project/create", tn.Key, map[string]any{"name": "Bench project B"})
	if err != nil {
		return nil, err
	}
	seedRand := rand.New(rand.NewPCG(3, 4))
	n := min(splitTasks, max(len(b.tasks), 200))
	for done := 0; done < n; done += 100 {
		ops := make([]map[string]any, min(100, n-done))
		for i := range ops {
			ops[i] = map[string]any{"op": "create", "projectId": p["id"], "title": seedText(seedRand, 4),
				"description": seedText(seedRand, 12), "priority": 1 + i%5}
		}
		out, err := a.Call(ctx, "POST", base+"task/batch", tn.Key, map[string]any{"atomic": true, "operations": ops})
		if err != nil {
			return nil, err
		}
		results, _ := out["results"].([]any)
		for _, r := range results {
			data, _ := r.(map[string]any)["data"].(map[string]any)
			id, _ := data["id"].(string)
			if id == "" {
				return nil, fmt.Errorf("a batch result without a task: %v", r)
			}
			o.tasks, o.statuses = append(o.tasks, id), append(o.statuses, "TODO")
		}
	}
	return o, nil
}

func keyHeader(key map[string]string) http.Header {
	h := http.Header{"Content-Type": {"application/json"}}
	for k, v := range key {
		h.Set(k, v)
	}
	return h
}

// runSplit runs read-detail and write with even workers on the first
// workspace and odd ones on the second.
func (b *bench) runSplit(ctx context.Context, o *other) {
	b.add(b.measure("read-detail"+splitSuffix, "closed-loop", func() loopResult {
		return closedLoop(ctx, b.o.Concurrency, b.o.Duration, func(ctx context.Context, w, i int) error {
			if w%2 == 0 {
				_, err := b.load.do("GET", b.detailURL(rand.IntN(len(b.tasks))), nil)
				return err
			}
			_, err := o.load.do("GET", b.base+"/openapi/v1/resource/task/detail?id="+o.tasks[rand.IntN(len(o.tasks))], nil)
			return err
		})
	}))
	half := max(b.o.Concurrency/2, 1)
	write := b.measure("write"+splitSuffix, "closed-loop", func() loopResult {
		return closedLoop(ctx, 2*half, b.o.Duration, func(ctx context.Context, w, i int) error {
			if w%2 == 0 {
				return updateOwn(b.load, b.base, b.tasks, b.statuses, w/2, half, i)
			}
			return updateOwn(o.load, b.base, o.tasks, o.statuses, w/2, half, i)
		})
	})
	write.BacklogDiscarded = b.settle(ctx, "write"+splitSuffix)
	b.add(write)
}

// updateOwn is writeLoop's step for worker w of conc on one workspace's
// tasks: it moves the worker's next task to its other status.
func updateOwn(lc *loadClient, base string, tasks, statuses []string, w, conc, i int) error {
	owned := (len(tasks) - w + conc - 1) / conc
	if owned <= 0 {
		return fmt.Errorf("fewer tasks than workers")
	}
	k := w + (i%owned)*conc
	next := "IN_PROGRESS"
	if statuses[k] == "IN_PROGRESS" {
		next = "TODO"
	}
	body := []byte(`{"taskId":"` + tasks[k] + `","status":"` + next + `"}`)
	if _, err := lc.do("POST", base+"/openapi/v1/resource/task/update", body); err != nil {
		return err
	}
	statuses[k] = next
	return nil
}
