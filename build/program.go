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
		layer, err := programLayer(p.Binaries[spec], p.Path, epoch, lmt)
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

// programLayer is a gzip tar holding the binary at dest (its parents as 0755 directories), root-owned,
// every timestamp epoch.
func programLayer(bin, dest string, epoch time.Time, mt types.MediaType) (v1.Layer, error) {
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
	rel := strings.TrimPrefix(path.Clean("/"+dest), "/")
	var dirs []string
	for d := path.Dir(rel); d != "."; d = path.Dir(d) {
		dirs = append([]string{d}, dirs...)
	}
	for _, d := range dirs {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: epoch}); err != nil {
			return nil, err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: rel, Mode: 0o755, Size: int64(len(data)), ModTime: epoch}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(data); err != nil {
		return nil, err
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
