# pmapi — the two commands a new machine needs are `make run` and `make test`;
# both bring up their own PostgreSQL (see README.md).
GO       ?= go
BIN      := bin/pmapi
PKGS     := ./...
# Packages share one throwaway PostgreSQL; each clones its database from a
# migrated template, so they can run side by side.
TESTFLAGS ?= -p 4 -count=1 -timeout 9m
# The harness's Docker fallback links the Docker client, so it is built only
# with the pgdocker tag: added when neither PMAPI_DATABASE_URL nor the
# PostgreSQL server binaries (PATH, /usr/lib/postgresql/*/bin) are there.
PG_CTL   := $(firstword $(shell command -v pg_ctl 2>/dev/null) $(wildcard /usr/lib/postgresql/*/bin/pg_ctl))
GOTAGS   ?= $(if $(PG_CTL)$(PMAPI_DATABASE_URL),,pgdocker)
TAGFLAG  := $(if $(GOTAGS),-tags $(GOTAGS))

.PHONY: build run test test-citus bench bench-quality chaos lint fmt tools openapi-tools ts-sdk-tools sdk chart-check \
	docs-check reference clean

build:
	$(GO) build $(TAGFLAG) -trimpath -ldflags "-s -w" -o $(BIN) ./cmd/pmapi

run: build
	$(BIN) dev

test: build tools chart-check openapi-tools ts-sdk-tools
	PMAPI_OPENAPI_LINT=require PMAPI_BROWSER_TESTS=require PMAPI_TS_SDK=require $(BIN) devdb exec -- $(GO) test $(TAGFLAG) $(TESTFLAGS) $(PKGS)

# The suite on a throwaway Citus cluster: a coordinator and two workers from the
# PostgreSQL binaries and the Citus extension (../shared/citus/install.sh), the
# schema distributed by the migrations, and the server role failing any statement
# that reaches more than one shard (docs/development.md).
CITUS_PKGS      ?= ./api/... ./console/... ./authz/... ./tenant/... ./jobs/... ./resource/... ./migrations/... ./cmd/pmapi/ ./internal/pgcluster/
CITUS_TESTFLAGS ?= -p 4 -count=1 -timeout 18m

test-citus: build tools
	$(BIN) devdb --citus exec -- $(GO) test $(CITUS_TESTFLAGS) $(CITUS_PKGS)

# Load test of a release build against same-run references (pgbench, a raw
# HTTP client); QUICK=1 runs each scenario a few seconds. JSON in bench/results/;
# PROFILE=dir adds CPU profiles of pmapi for every closed-loop phase; PERF=dir
# records them with perf(1) (root) and splits each party's kernel time; CITUS=1
# then runs read-detail and write on a three-node Citus cluster and compares;
# STATEMENTS=1 reports pg_stat_statements per write and per delivery.
bench: build
	$(GO) run ./cmd/pmbench -pmapi $(BIN) $(if $(QUICK),-quick) $(if $(PROFILE),-profile $(PROFILE)) $(if $(PERF),-perf $(PERF)) $(if $(CITUS),-citus) $(if $(STATEMENTS),-statements) $(if $(TASKS),-tasks $(TASKS))

# Root-cause analyses (cmd/pmbench -rrca): the quality benchmark of similar
# analyses and suggestions (resource/rrca/quality, tune and measure splits),
# then readiness after a change on an idle server and CPU per recomputation at
# 1,000 and 10,000 analyses in a workspace. QUICK=1: 200 and 1,000;
# STATEMENTS=1 adds pg_stat_statements per change.
bench-quality: build
	$(GO) run ./cmd/pmbench -pmapi $(BIN) -rrca $(if $(QUICK),-quick) $(if $(STATEMENTS),-statements)

# Faults under load (cmd/pmchaos, docs/development.md): kill -9 of the API once
# and of the worker twice and an immediate PostgreSQL restart while clients
# write; fails on a lost write, event or delivery, or a 5xx outside the
# restart. STRICT=1 also fails on a 5xx during the restart. CITUS=1 runs it on
# a Citus cluster, moving the workspace to the other worker under the load and
# restarting the worker that holds it. About 2 minutes (4 on Citus); not part
# of `make test`.
chaos: build
	$(GO) run ./cmd/pmchaos -pmapi $(BIN) $(if $(STRICT),-strict) $(if $(CITUS),-citus)

# helm and promtool (the chart checks; promtool also checks real scrapes in the
# tests) and jq (docs/quickstart.md, run by a test): used from PATH, or put in
# .tools/bin without root and without changing the machine (charts/tools.sh),
# or named with what to install.
export PATH := $(CURDIR)/.tools/bin:$(PATH)
tools:
	@bash charts/tools.sh

# The OpenAPI linters (Redocly CLI, Spectral; api/openapi_lint_test.go) at the
# versions tools/openapi/package-lock.json pins, put in its git-ignored
# node_modules by npm ci (no global install, no root): again only when the
# lock file changes.
OPENAPI_TOOLS := tools/openapi/node_modules/.package-lock.json
$(OPENAPI_TOOLS): tools/openapi/package-lock.json
	cd tools/openapi && npm ci --no-audit --no-fund --ignore-scripts
	@touch $@
openapi-tools: $(OPENAPI_TOOLS)

# The TypeScript SDK's packages (openapi-typescript, openapi-fetch, tsc, ...)
# at the versions sdk/ts/package-lock.json pins, installed the same way.
TS_SDK_TOOLS := sdk/ts/node_modules/.package-lock.json
$(TS_SDK_TOOLS): sdk/ts/package-lock.json
	cd sdk/ts && npm ci --no-audit --no-fund --ignore-scripts
	@touch $@
ts-sdk-tools: $(TS_SDK_TOOLS)

# Regenerate the Go SDK (sdk/) from the document the server serves, with the
# oapi-codegen go.mod pins (tool directive), and the TypeScript SDK's types
# (sdk/ts/src/schema.gen.ts) with the openapi-typescript sdk/ts pins;
# TestSDKIsFresh and TestSDKIsFreshTypeScript fail when they are stale.
sdk: build ts-sdk-tools
	PMAPI_TS_SDK=require $(BIN) devdb exec -- $(GO) test $(TAGFLAG) -count=1 -run '^TestSDKIsFresh' ./sdk/ -args -update

# The API reference at /docs in headless Chromium: it renders the served
# document under its Content-Security-Policy. make test runs the same test,
# which skips (and says so) where no Chromium is installed; this target insists.
docs-check: build
	@command -v chromium >/dev/null || command -v chromium-browser >/dev/null || command -v google-chrome >/dev/null || \
	  { echo "docs-check needs a headless Chromium: apt-get install chromium (Debian)"; exit 1; }
	$(BIN) devdb exec -- $(GO) test $(TAGFLAG) -count=1 -v -run 'TestReferencePage' ./api/

# Refresh the Redoc bundle /docs embeds from the npm registry, at the version
# api/reference.go names (RedocVersion); the result is committed.
REDOC_VERSION = $(shell sed -n 's/^const RedocVersion = "\(.*\)"/\1/p' api/reference.go)
reference:
	@tmp=$$(mktemp -d) && cd $$tmp && npm pack --silent redoc@$(REDOC_VERSION) >/dev/null && \
	  tar xzf redoc-$(REDOC_VERSION).tgz && \
	  cp package/LICENSE package/bundles/redoc.standalone.js package/bundles/redoc.standalone.js.LICENSE.txt $(CURDIR)/api/reference/ && \
	  rm -rf $$tmp && echo "api/reference: redoc $(REDOC_VERSION)"

# Helm lint and render, alert rules and dashboard checks (charts/check.sh).
chart-check:
	bash charts/check.sh

STATICCHECK := $(shell $(GO) env GOPATH)/bin/staticcheck
$(STATICCHECK):
	$(GO) install honnef.co/go/tools/cmd/staticcheck@v0.8.2

lint: $(STATICCHECK)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@bash tools/longlines.sh || { echo "wrap the lines above (at most 120 characters)"; exit 1; }
	$(GO) vet $(PKGS)
	$(GO) vet -tags pgdocker ./internal/pgcluster/
	$(STATICCHECK) $(PKGS)
	$(STATICCHECK) -tags pgdocker ./internal/pgcluster/

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin
