//go:build tools

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/build"
)

// catalogCmd builds a catalog image with catalogbot's own build package, exactly as `catalogbot build`
// does, on a base image read from an OCI layout: the base is served by an in-process registry on
// loopback, since build reads its base from a registry.
func catalogCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("catalog", flag.ContinueOnError)
	fbc := fs.String("fbc", "", "file-based catalog directory")
	baseLayout := fs.String("base-layout", "", "OCI layout of the base (opm) image")
	ref := fs.String("ref", "", "name of the catalog image")
	out := fs.String("out", "", "output OCI layout directory; DIR.tar is written too")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *fbc == "" || *baseLayout == "" || *ref == "" || *out == "" {
		return errors.New("catalog: -fbc, -base-layout, -ref and -out are required")
	}
	base, err := readLayoutImage(*baseLayout)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: registry.New(registry.Logger(log.New(io.Discard, "", 0))), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	baseRef, err := name.ParseReference(ln.Addr().String()+"/base/opm:latest", name.Insecure)
	if err != nil {
		return err
	}
	if err := remote.Write(baseRef, base, remote.WithContext(ctx)); err != nil {
		return fmt.Errorf("serving the base image: %w", err)
	}
	res, err := build.Image(ctx, *fbc, build.Options{Base: baseRef.String(), NameOptions: []name.Option{name.Insecure}})
	if err != nil {
		return fmt.Errorf("building catalog %s: %w", *fbc, err)
	}
	if res.Image == nil {
		return errors.New("building catalog: the base is an index; want a single-platform base")
	}
	return writeOCI(ctx, res.Image, *ref, *out)
}
