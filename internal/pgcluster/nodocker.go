//go:build !pgdocker

package pgcluster

import (
	"context"
	"errors"
)

// startDocker stands in for the Docker fallback (docker.go), which only a build
// tagged pgdocker carries, so that the server binary links no Docker client.
func startDocker(context.Context, Options) (*Server, error) {
	return nil, errors.New("this binary was built without the Docker fallback (go build -tags pgdocker)")
}
