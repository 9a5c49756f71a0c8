// Command releaseimage packages the release's static catalogbot binaries as the bot's multi-platform
// container image with the project's own daemonless image code (build.ProgramImage), and writes it as an
// OCI layout archive and/or pushes it (by digest, then the tag). hack/release.sh runs it.
//
//	cd hack && go run ./releaseimage --base REF --bin linux/amd64=PATH --bin linux/arm64=PATH \
//	    [--label k=v]... [--layout FILE.tar] [--push REF] [--ca-certs FILE]
//
// On the scratch base (no files at all) the image also gets what `serve` and `pr` need of a system: a
// writable temporary directory (/tmp, 01777: their checkouts and renders go to os.TempDir), the CA
// certificates of --ca-certs (TLS to GitHub and registries), and a non-root user (65532, distroless's).
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
	caCerts := flag.String("ca-certs", "/etc/ssl/certs/ca-certificates.crt", "with --base scratch: the CA certificates bundle the image gets")
	flag.Var(bins, "bin", "os/arch=path of a static binary (repeat)")
	flag.Var(labels, "label", "key=value config label and index annotation (repeat)")
	flag.Parse()
	if err := run(context.Background(), *base, bins, labels, *layout, *push, *ref, *caCerts); err != nil {
		fmt.Fprintln(os.Stderr, "releaseimage:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, base string, bins, labels pairs, layout, push, refName, caCerts string) error {
	if layout == "" && push == "" {
		return fmt.Errorf("nothing to do: give --layout and/or --push")
	}
	epoch, err := build.EpochFromEnv()
	if err != nil {
		return err
	}
	p, err := program(base, bins, caCerts)
	if err != nil {
		return err
	}
	res, err := build.ProgramImage(ctx, p, build.Options{Base: base, Epoch: epoch, Labels: labels})
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

// program is the bot's image program: the binaries, and on the scratch base the temporary directory, CA
// certificates and user a base image would give.
func program(base string, bins pairs, caCerts string) (build.Program, error) {
	p := build.Program{Binaries: bins, Path: "/usr/local/bin/catalogbot", Args: []string{"serve"}}
	if base != "scratch" {
		return p, nil
	}
	certs, err := os.ReadFile(caCerts)
	if err != nil {
		return p, fmt.Errorf("--base scratch needs CA certificates (--ca-certs): %w", err)
	}
	p.Dirs = map[string]int64{"/tmp": 0o1777}
	p.Files = map[string][]byte{"/etc/ssl/certs/ca-certificates.crt": certs}
	p.User = "65532:65532"
	return p, nil
}
