package build

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/catalogbot/catalogbot/diag"
)

// Program is a static program to package as a multi-platform image (as ko does, without a daemon): one
// binary per platform, put at Path and made the entrypoint.
type Program struct {
	// Binaries maps "os/arch[/variant]" to the binary built for it.
	Binaries map[string]string
	// Path is where the binary goes in the image ("/usr/local/bin/catalogbot").
	Path string
	// Args follow the entrypoint (the image's Cmd).
	Args []string
	// Dirs are directories the layer adds, by absolute path, with their mode (a scratch base has none: the
	// program's temporary directory, /tmp at 01777, must be one).
	Dirs map[string]int64
	// Files are files the layer adds (0644), by absolute path (a scratch base's CA certificates).
	Files map[string][]byte
	// User is the image's user ("" keeps the base's).
	User string
}

// ProgramImage builds an OCI index with one image per binary: opts.Base's image of that platform ("scratch"
// for none) plus one layer holding the binary (root-owned, 0755, every timestamp the epoch), entrypoint
// the binary, and opts.Labels. The same binaries, base and epoch give the same digest.
func ProgramImage(ctx context.Context, p Program, opts Options) (Result, error) {
	epoch, err := opts.epoch()
	if err != nil {
		return Result{}, err
	}
	var baseIdx v1.ImageIndex
	if opts.Base != "scratch" {
		baseName := opts.Base
		if baseName == "" {
			return Result{}, diag.UsageError(fmt.Errorf("program image: no base image (use \"scratch\" for none)"))
		}
		ref, err := name.ParseReference(baseName, opts.NameOptions...)
		if err != nil {
			return Result{}, diag.UsageError(fmt.Errorf("base image %q: %w", baseName, err))
		}
		if baseIdx, err = remote.Index(ref, opts.remoteOptions(ctx)...); err != nil {
			return Result{}, diag.InfraError(fmt.Errorf("fetch base index %s (a multi-platform base is required): %w", ref, err))
		}
	}
	specs := slices.Sorted(maps.Keys(p.Binaries))
	var adds []mutate.IndexAddendum
	var res Result
	for _, spec := range specs {
		plat, err := v1.ParsePlatform(spec)
		if err != nil {
			return Result{}, diag.UsageError(fmt.Errorf("platform %q: %w", spec, err))
		}
		base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
		if baseIdx != nil {
			if base, err = platformImage(baseIdx, *plat); err != nil {
				return Result{}, fmt.Errorf("base %s: %w", opts.Base, err)
			}
		}
		lmt := types.OCILayer
		if mt, err := base.MediaType(); err == nil && mt == types.DockerManifestSchema2 {
			lmt = types.DockerLayer
		}
		layer, err := programLayer(p, spec, epoch, lmt)
		if err != nil {
			return Result{}, err
		}
		img, err := mutate.Append(base, mutate.Addendum{Layer: layer, History: v1.History{Created: v1.Time{Time: epoch},
			CreatedBy: "catalogbot release: ADD " + p.Path}})
		if err != nil {
			return Result{}, fmt.Errorf("append %s for %s: %w", p.Binaries[spec], spec, err)
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			return Result{}, err
		}
		cfg = cfg.DeepCopy()
		cfg.Created = v1.Time{Time: epoch}
		cfg.OS, cfg.Architecture, cfg.Variant = plat.OS, plat.Architecture, plat.Variant
		cfg.Config.Entrypoint = []string{p.Path}
		cfg.Config.Cmd = slices.Clone(p.Args)
		if p.User != "" {
			cfg.Config.User = p.User
		}
		labels := maps.Clone(cfg.Config.Labels)
		if labels == nil {
			labels = map[string]string{}
		}
		maps.Copy(labels, opts.Labels)
		cfg.Config.Labels = labels
		if img, err = mutate.ConfigFile(img, cfg); err != nil {
			return Result{}, err
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: plat}})
		res.Platforms = append(res.Platforms, *plat)
	}
	if len(adds) == 0 {
		return Result{}, diag.UsageError(fmt.Errorf("program image: no binaries"))
	}
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...)
	if len(opts.Labels) > 0 {
		idx = mutate.Annotations(idx, opts.Labels).(v1.ImageIndex)
	}
	res.Index = idx
	if _, err := res.Digest(); err != nil {
		return Result{}, err
	}
	return res, nil
}

// platformImage is the image of idx for plat (exact os, architecture and variant when given).
func platformImage(idx v1.ImageIndex, plat v1.Platform) (v1.Image, error) {
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, diag.InfraError(err)
	}
	for _, d := range im.Manifests {
		if d.Platform != nil && d.MediaType.IsImage() && d.Platform.Satisfies(plat) {
			img, err := idx.Image(d.Digest)
			if err != nil {
				return nil, diag.InfraError(err)
			}
			return img, nil
		}
	}
	return nil, diag.UsageError(fmt.Errorf("no image for %s", plat))
}

// programLayer is a gzip tar holding p's binary for spec at p.Path, p.Dirs and p.Files (their parents as
// 0755 directories), root-owned, every timestamp epoch, in path order.
func programLayer(p Program, spec string, epoch time.Time, mt types.MediaType) (v1.Layer, error) {
	bin := p.Binaries[spec]
	data, err := os.ReadFile(bin)
	if err != nil {
		return nil, diag.UsageError(fmt.Errorf("read binary %s: %w", bin, err))
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	rel := func(abs string) string { return strings.TrimPrefix(path.Clean("/"+abs), "/") }
	dirs := map[string]int64{}
	files := map[string][]byte{rel(p.Path): data}
	for f, content := range p.Files {
		files[rel(f)] = content
	}
	for f := range files {
		for d := path.Dir(f); d != "."; d = path.Dir(d) {
			dirs[d] = 0o755
		}
	}
	for d, mode := range p.Dirs {
		dirs[rel(d)] = mode
	}
	for _, d := range slices.Sorted(maps.Keys(dirs)) {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: dirs[d], ModTime: epoch}); err != nil {
			return nil, err
		}
	}
	for _, f := range slices.Sorted(maps.Keys(files)) {
		mode := int64(0o644)
		if f == rel(p.Path) {
			mode = 0o755
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f, Mode: mode, Size: int64(len(files[f])), ModTime: epoch}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(files[f]); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	gz := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(gz)), nil },
		tarball.WithMediaType(mt))
}
