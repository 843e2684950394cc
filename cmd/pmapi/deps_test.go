package main

import (
	"os/exec"
	"strings"
	"testing"
)

// containerClients are import paths of Docker's client and what it drags in.
// The dev harness's Docker fallback needs them and lives behind the pgdocker
// build tag; the server binary that ships in the image must not carry them
// (image scanners flag every CVE in the Docker client).
var containerClients = []string{
	"github.com/docker/",
	"github.com/ory/dockertest",
	"github.com/moby/",
	"github.com/containerd/",
	"github.com/opencontainers/",
}

func TestServerBinaryLinksNoDockerClient(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the binary's packages: %v", err)
	}
	// -tags= overrides any tags in GOFLAGS: the check is about the default
	// build, the one the Dockerfile makes.
	out, err := exec.Command(goTool, "list", "-tags=", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, prefix := range containerClients {
			if strings.HasPrefix(pkg, prefix) {
				t.Errorf("cmd/pmapi links %s; keep Docker code behind the pgdocker build tag (internal/pgcluster/docker.go)", pkg)
			}
		}
	}
}
