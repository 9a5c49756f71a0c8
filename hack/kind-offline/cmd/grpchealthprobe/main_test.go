//go:build tools

package main

import (
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

func TestProbe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	hs := health.NewServer()
	healthpb.RegisterHealthServer(srv, hs)
	go srv.Serve(ln)
	defer srv.Stop()
	addr := ln.Addr().String()

	if got := probe(addr, "", 2*time.Second); got != 0 {
		t.Errorf("serving: exit %d, want 0", got)
	}
	hs.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	if got := probe(addr, "", 2*time.Second); got != 1 {
		t.Errorf("not serving: exit %d, want 1", got)
	}
	if got := probe(addr, "unknown.Service", 2*time.Second); got != 2 {
		t.Errorf("unknown service: exit %d, want 2", got)
	}
	srv.Stop()
	if got := probe(addr, "", 500*time.Millisecond); got != 2 {
		t.Errorf("stopped server: exit %d, want 2", got)
	}
}
