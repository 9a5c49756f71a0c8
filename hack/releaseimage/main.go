// Command releaseimage packages the release's static catalogbot binaries as the bot's multi-platform
// container image with the project's own daemonless image code (build.ProgramImage), and writes it as an
// OCI layout archive and/or pushes it (by digest, then the tag). hack/release.sh runs it.
//
//	cd hack && go run ./releaseimage --base REF --bin linux/amd64=PATH --bin linux/arm64=PATH \
//	    [--label k=v]... [--layout FILE.tar] [--push REF]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/catalogbot/catalogbot/build"
)

type pairs map[string]string

func (p pairs) String() string { return fmt.Sprint(map[string]string(p)) }
func (p pairs) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" || v == "" {
		return fmt.Errorf("%q is not key=value", s)
	}
	p[k] = v
	return nil
}

func main() {
	bins, labels := pairs{}, pairs{}
	base := flag.String("base", "", `base image with the bot's platforms (CA certificates, a non-root user), or "scratch"`)
	layout := flag.String("layout", "", "write the image as an OCI layout tar archive here")
	push := flag.String("push", "", "push the image to this tag")
	ref := flag.String("ref", "ghcr.io/catalogbot/catalogbot:dev", "the image name recorded in the layout")
	flag.Var(bins, "bin", "os/arch=path of a static binary (repeat)")
	flag.Var(labels, "label", "key=value config label and index annotation (repeat)")
	flag.Parse()
	if err := run(context.Background(), *base, bins, labels, *layout, *push, *ref); err != nil {
		fmt.Fprintln(os.Stderr, "releaseimage:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, base string, bins, labels pairs, layout, push, refName string) error {
	if layout == "" && push == "" {
		return fmt.Errorf("nothing to do: give --layout and/or --push")
	}
	epoch, err := build.EpochFromEnv()
	if err != nil {
		return err
	}
	res, err := build.ProgramImage(ctx, build.Program{Binaries: bins, Path: "/usr/local/bin/catalogbot", Args: []string{"serve"}},
		build.Options{Base: base, Epoch: epoch, Labels: labels})
	if err != nil {
		return err
	}
	dig, err := res.Digest()
	if err != nil {
		return err
	}
	if layout != "" {
		if err := build.WriteLayoutArchive(ctx, res, layout, refName); err != nil {
			return fmt.Errorf("write %s: %w", layout, err)
		}
	}
	if push != "" {
		tag, err := name.NewTag(push)
		if err != nil {
			return fmt.Errorf("--push %q: %w", push, err)
		}
		if _, err := build.Push(ctx, res, tag, build.Options{}); err != nil {
			return err
		}
	}
	fmt.Println(dig.String())
	return nil
}
