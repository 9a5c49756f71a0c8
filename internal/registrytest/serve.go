package registrytest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

// Serve starts go-containerregistry's in-process registry on a loopback port outside of tests (the demo
// uses it). stop shuts it down.
func Serve(ctx context.Context) (reg *Registry, stop func(), err error) {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, fmt.Errorf("start registry: %w", err)
	}
	srv := &http.Server{Handler: registry.New(registry.Logger(discardLogger())), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // the listener is ours and closed only by stop
		}
	}()
	host := ln.Addr().String()
	stop = func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}
	return &Registry{Host: host, URL: "http://" + host}, stop, nil
}
