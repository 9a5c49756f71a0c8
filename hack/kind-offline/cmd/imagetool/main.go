//go:build tools

// Command imagetool builds the offline kind lane's images without a container daemon, with
// go-containerregistry, and writes each as an OCI image layout (directory) plus its tar (what
// `ctr images import` and kind's image-archive loading read; the manifest digest is kept).
//
//	imagetool scratch -ref R -out DIR [-entrypoint JSON] [-cmd JSON] [-user U] [-env K=V]... [-dir PATH]... SRC:DEST[:MODE]...
//	imagetool catalog -fbc DIR -base-layout DIR -ref R -out DIR
//	imagetool testcatalog -out DIR -images DIR -operator-image REF
//	imagetool olmv1manifests -standard FILE -out DIR -version V -catalogd-image R -operator-controller-image R -registry-image R
//
// Each prints the manifest digest of what it wrote.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: imagetool scratch|catalog|testcatalog|olmv1manifests [flags]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	switch os.Args[1] {
	case "scratch":
		err = scratchCmd(ctx, os.Args[2:])
	case "catalog":
		err = catalogCmd(ctx, os.Args[2:])
	case "olmv1manifests":
		err = olmv1ManifestsCmd(os.Args[2:])
	case "testcatalog":
		err = testCatalogCmd(ctx, os.Args[2:])
	default:
		err = fmt.Errorf("unknown subcommand %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "imagetool:", err)
		os.Exit(1)
	}
}
