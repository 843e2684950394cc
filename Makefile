# pmapi — the two commands a new machine needs are `make run` and `make test`;
# both bring up their own PostgreSQL (see README.md).
GO       ?= go
BIN      := bin/pmapi
PKGS     := ./...
# Packages share one throwaway PostgreSQL; each clones its database from a
# migrated template, so they can run side by side.
TESTFLAGS ?= -p 4 -count=1 -timeout 9m

.PHONY: build run test test-citus bench lint fmt tools chart-check docs-check reference clean

build:
	$(GO) build -trimpath -ldflags "-s -w" -o $(BIN) ./cmd/pmapi

run: build
	$(BIN) dev

test: build tools chart-check
	$(BIN) devdb exec -- $(GO) test $(TESTFLAGS) $(PKGS)

# The suite on a throwaway Citus cluster: a coordinator and two workers from the
# PostgreSQL binaries and the Citus extension (../shared/citus/install.sh), the
# schema distributed by the migrations, and the server role failing any statement
# that reaches more than one shard (docs/development.md).
CITUS_PKGS      ?= ./api/... ./authz/... ./tenant/... ./jobs/... ./resource/... ./migrations/... ./cmd/pmapi/ ./internal/pgcluster/
CITUS_TESTFLAGS ?= -p 4 -count=1 -timeout 18m

test-citus: build tools
	$(BIN) devdb --citus exec -- $(GO) test $(CITUS_TESTFLAGS) $(CITUS_PKGS)

# Load test of a release build against same-run references (pgbench, a raw
# HTTP client); QUICK=1 runs each scenario a few seconds. JSON in bench/results/;
# PROFILE=dir adds CPU profiles of pmapi for every closed-loop phase; CITUS=1
# then runs read-detail and write on a three-node Citus cluster and compares.
bench: build
	$(GO) run ./cmd/pmbench -pmapi $(BIN) $(if $(QUICK),-quick) $(if $(PROFILE),-profile $(PROFILE)) $(if $(CITUS),-citus)

# promtool checks real scrapes in the tests, headless Chromium renders /docs,
# curl and jq run docs/quickstart.md; installed from Debian's packages when
# missing (with service starts forbidden: only the binaries are wanted).
tools:
	@for t in promtool chromium curl jq; do command -v $$t >/dev/null || missing=1; done; [ -z "$$missing" ] || { \
	  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus chromium curl jq >/dev/null; \
	  rm -f /usr/sbin/policy-rc.d; }

# The API reference at /docs in headless Chromium: it renders the served
# document under its Content-Security-Policy (also part of make test).
docs-check: build tools
	$(BIN) devdb exec -- $(GO) test -count=1 -run 'TestReferencePage' ./api/

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
	$(GO) vet $(PKGS)
	$(STATICCHECK) $(PKGS)

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin
