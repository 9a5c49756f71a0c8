//go:build tools

// Command registry is the offline lane's in-cluster OCI registry for OLM v1: catalogd and
// operator-controller pull catalog and bundle images themselves, over the network, so the lane serves
// them from this registry (go-containerregistry's pkg/registry, in memory, plain HTTP; the controllers'
// registries.conf marks it insecure). The e2e test pushes the images through the Service's NodePort.
//
//	registry [-addr :5000]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

func main() {
	addr := flag.String("addr", ":5000", "listen address")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, *addr); err != nil {
		fmt.Fprintln(os.Stderr, "registry:", err)
		os.Exit(1)
	}
}

func serve(ctx context.Context, addr string) error {
	srv := &http.Server{
		Addr:              addr,
		Handler:           registry.New(registry.Logger(log.New(os.Stderr, "registry: ", log.LstdFlags))),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	log.Printf("registry: serving on %s", addr)
	select {
	case err := <-errc:
		return fmt.Errorf("serving %s: %w", addr, err)
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("shutting down: %w", err)
		}
		return nil
	}
}
