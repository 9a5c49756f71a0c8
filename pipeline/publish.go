package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/build"
	"github.com/catalogbot/catalogbot/checks/validate"
	"github.com/catalogbot/catalogbot/internal/diag"
	"github.com/catalogbot/catalogbot/internal/regnet"
	"github.com/catalogbot/catalogbot/pipeline/report"
)

// PublishInput is a catalog to build into an image and push.
type PublishInput struct {
	// CatalogDir holds the file-based catalog (the merged revision's).
	CatalogDir string
	// Target is the image reference to push (a tag; the digest is pushed first, the tag moved last).
	Target string
	// Build are the image build options (base, platforms, epoch, registry options).
	Build build.Options
	// Revision is the commit the catalog is built from (the pushed commit), "" when unknown.
	Revision string
}

// Publish validates the catalog again, builds its image and pushes it by digest, then moves the tag. It
// never pushes a catalog that does not validate, and a failed push never moves the tag.
func Publish(ctx context.Context, in PublishInput) (report.Stage, string) {
	start := time.Now()
	st := report.Stage{Name: "publish"}
	defer func() { st.Duration = time.Since(start) }()
	res, err := validate.Dir(ctx, in.CatalogDir, validate.Options{})
	if err != nil {
		return finish(stageFromErr(err), start), ""
	}
	if !res.Valid() {
		st = stageFromDiags("not published: the catalog does not validate", res.Diagnostics)
		return finish(st, start), ""
	}
	var nameOpts []name.Option
	if regnet.RefIsLoopback(in.Target) {
		nameOpts = append(nameOpts, name.Insecure)
	}
	target, err := name.ParseReference(in.Target, nameOpts...)
	if err != nil {
		return finish(stageFromErr(diag.UsageError(fmt.Errorf("publish target %q: %w", in.Target, err))), start), ""
	}
	opts := in.Build
	if opts.Transport == nil {
		opts.Transport = regnet.LoopbackOnlyHTTP{Next: remote.DefaultTransport}
	}
	if regnet.RefIsLoopback(opts.Base) {
		opts.NameOptions = append(opts.NameOptions, name.Insecure)
	}
	img, err := build.Image(ctx, in.CatalogDir, opts)
	if err != nil {
		return finish(stageFromErr(err), start), ""
	}
	dig, err := build.Push(ctx, img, target, opts)
	if err != nil {
		return finish(stageFromErr(err), start), ""
	}
	from := ""
	if in.Revision != "" {
		from = " from " + short(in.Revision)
	}
	st = report.Stage{Name: "publish", Status: report.Pass,
		Summary: fmt.Sprintf("pushed %s%s (%s), then tagged %s", dig.String(), from, plural(len(img.Platforms), "platform"), target.String())}
	return finish(st, start), dig.String()
}

func finish(st report.Stage, start time.Time) report.Stage {
	st.Name = "publish"
	st.Duration = time.Since(start)
	return st
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
