//go:build tools

package main

import (
	"archive/tar"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

// scratchCmd builds an image from files on disk (static binaries plus empty directories), optionally on
// a rootfs tar as its first layer.
func scratchCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("scratch", flag.ContinueOnError)
	ref := fs.String("ref", "", "image name written into the layout (io.containerd.image.name)")
	out := fs.String("out", "", "output OCI layout directory; DIR.tar is written too")
	entrypoint := fs.String("entrypoint", "", "JSON array")
	cmd := fs.String("cmd", "", "JSON array")
	user := fs.String("user", "", "image user (uid[:gid])")
	baseTar := fs.String("base-tar", "", "uncompressed rootfs tar used as the first layer (e.g. a debootstrap)")
	var envs, dirs multiFlag
	fs.Var(&envs, "env", "K=V (repeatable)")
	fs.Var(&dirs, "dir", "directory to create, PATH or PATH:MODE (repeatable; /tmp gets 1777)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *ref == "" || *out == "" {
		return fmt.Errorf("scratch: -ref and -out are required")
	}
	layerFile, err := os.CreateTemp("", "imagetool-layer-*.tar")
	if err != nil {
		return err
	}
	defer os.Remove(layerFile.Name())
	if err := writeLayerTar(layerFile, dirs, fs.Args()); err != nil {
		layerFile.Close()
		return fmt.Errorf("scratch %s: %w", *ref, err)
	}
	if err := layerFile.Close(); err != nil {
		return err
	}
	layer, err := tarball.LayerFromFile(layerFile.Name())
	if err != nil {
		return fmt.Errorf("scratch %s: layer: %w", *ref, err)
	}
	layers := []v1.Layer{layer}
	if *baseTar != "" {
		base, err := tarball.LayerFromFile(*baseTar)
		if err != nil {
			return fmt.Errorf("scratch %s: base layer: %w", *ref, err)
		}
		layers = []v1.Layer{base, layer}
	}
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS = "amd64", "linux"
	cf.Created = v1.Time{Time: time.Unix(0, 0).UTC()}
	cf.Config.Env = append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, envs...)
	cf.Config.User = *user
	if cf.Config.Entrypoint, err = jsonList(*entrypoint); err != nil {
		return fmt.Errorf("-entrypoint: %w", err)
	}
	if cf.Config.Cmd, err = jsonList(*cmd); err != nil {
		return fmt.Errorf("-cmd: %w", err)
	}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return err
	}
	return writeOCI(ctx, img, *ref, *out)
}

func jsonList(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	var l []string
	err := json.Unmarshal([]byte(s), &l)
	return l, err
}

// writeLayerTar writes dirs and SRC:DEST[:MODE] files (parents created as 0755 directories).
func writeLayerTar(w io.Writer, dirs, files []string) error {
	tw := tar.NewWriter(w)
	epoch := time.Unix(0, 0)
	made := map[string]bool{}
	var mkdir func(p string, mode int64) error
	mkdir = func(p string, mode int64) error {
		p = strings.Trim(path.Clean(p), "/")
		if p == "" || p == "." || made[p] {
			return nil
		}
		if err := mkdir(path.Dir(p), 0o755); err != nil {
			return err
		}
		made[p] = true
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: p + "/", Mode: mode, ModTime: epoch})
	}
	for _, d := range dirs {
		p, m, _ := strings.Cut(d, ":")
		mode := int64(0o755)
		if path.Clean(p) == "/tmp" {
			mode = 0o1777
		}
		if m != "" {
			v, err := strconv.ParseInt(m, 8, 64)
			if err != nil {
				return fmt.Errorf("dir %s: mode: %w", d, err)
			}
			mode = v
		}
		if err := mkdir(p, mode); err != nil {
			return err
		}
	}
	for _, f := range files {
		parts := strings.SplitN(f, ":", 3)
		if len(parts) < 2 {
			return fmt.Errorf("file %q: want SRC:DEST[:MODE]", f)
		}
		src, dest := parts[0], strings.Trim(path.Clean(parts[1]), "/")
		st, err := os.Stat(src)
		if err != nil {
			return err
		}
		mode := int64(st.Mode().Perm())
		if len(parts) == 3 {
			if mode, err = strconv.ParseInt(parts[2], 8, 64); err != nil {
				return fmt.Errorf("file %s: mode: %w", f, err)
			}
		}
		if err := mkdir(path.Dir(dest), 0o755); err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: dest, Mode: mode, Size: st.Size(), ModTime: epoch}); err != nil {
			return err
		}
		in, err := os.Open(filepath.Clean(src))
		if err != nil {
			return err
		}
		_, err = io.Copy(tw, in)
		in.Close()
		if err != nil {
			return fmt.Errorf("file %s: %w", src, err)
		}
	}
	return tw.Close()
}
