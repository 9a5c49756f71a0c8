//go:build tools

// Command grpchealthprobe stands in for grpc_health_probe in the offline lane's opm image (the upstream
// module is not served by this project's module proxy). OLM's registry pods run
// `grpc_health_probe -addr=:50051` as readiness and liveness probes; this checks the standard gRPC
// health service the same way: exit 0 when SERVING, 1 when reachable but not serving, 2 on errors.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

func main() {
	addr := flag.String("addr", "", "address of the gRPC server (host:port or :port)")
	service := flag.String("service", "", "service name to check (empty: the server as a whole)")
	timeout := flag.Duration("rpc-timeout", time.Second, "timeout of the health RPC")
	connTimeout := flag.Duration("connect-timeout", time.Second, "timeout of establishing the connection")
	flag.Parse()
	if *addr == "" {
		fmt.Fprintln(os.Stderr, "grpc_health_probe: -addr is required")
		os.Exit(2)
	}
	target := *addr
	if strings.HasPrefix(target, ":") {
		target = "127.0.0.1" + target
	}
	os.Exit(probe(target, *service, *connTimeout+*timeout))
}

func probe(target, service string, timeout time.Duration) int {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Fprintf(os.Stderr, "grpc_health_probe: connecting to %s: %v\n", target, err)
		return 2
	}
	defer conn.Close()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		fmt.Fprintf(os.Stderr, "grpc_health_probe: health check of %s: %v\n", target, err)
		return 2
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		fmt.Fprintf(os.Stderr, "grpc_health_probe: %s is %s\n", target, resp.GetStatus())
		return 1
	}
	fmt.Println("status: SERVING")
	return 0
}
