# pmapi — the two commands a new machine needs are `make run` and `make test`;
# both bring up their own PostgreSQL (see README.md).
GO       ?= go
BIN      := bin/pmapi
PKGS     := ./...
# Packages share one throwaway PostgreSQL; each clones its database from a
# migrated template, so they can run side by side.
TESTFLAGS ?= -p 4 -count=1 -timeout 9m

.PHONY: build run test lint fmt tools clean

build:
	$(GO) build -trimpath -ldflags "-s -w" -o $(BIN) ./cmd/pmapi

run: build
	$(BIN) dev

test: build
	$(BIN) devdb exec -- $(GO) test $(TESTFLAGS) $(PKGS)

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
