//go:build tools

// Command testoperator is the operator the offline kind lane installs through OLM: it serves /healthz
// and /readyz on :8080 and logs a heartbeat. With SMOKE_CRASH=1 it logs why and exits 1 at once, so
// its pod crash-loops (the broken operator of the lane).
package main

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Version is set with -ldflags "-X main.Version=...".
var Version = "dev"

func main() {
	log.SetFlags(log.LstdFlags | log.LUTC)
	log.Printf("catalogbot test operator %s starting", Version)
	if os.Getenv("SMOKE_CRASH") == "1" {
		log.Printf("FATAL: SMOKE_CRASH=1: this build crashes on purpose (catalogbot broken-operator fixture)")
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	mux := http.NewServeMux()
	ok := func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") }
	mux.HandleFunc("/healthz", ok)
	mux.HandleFunc("/readyz", ok)
	srv := &http.Server{Addr: ":8080", Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
			log.Fatalf("serving :8080: %v", err)
		}
	}()
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			log.Printf("stopping")
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
			return
		case <-t.C:
			log.Printf("watching namespace %s", os.Getenv("WATCH_NAMESPACE"))
		}
	}
}
