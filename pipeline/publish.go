package pipeline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/catalogbot/catalogbot/build"
	"github.com/catalogbot/catalogbot/checks/validate"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/registry"
	"github.com/catalogbot/catalogbot/report"
)

// PublishInput is a catalog to build into an image and push.
type PublishInput struct {
	// CatalogDir holds the file-based catalog (the merged revision's).
	CatalogDir string
	// Dir is CatalogDir's path in the repository: the validation's diagnostics name files under it.
	Dir string
	// Target is the image reference to push (a tag; the digest is pushed first, the tag moved last).
	Target string
	// Tags are further references (tags) the image is pushed under after Target, each moved only
	// forward as Target is (config.Catalog.Tags).
	Tags []string
	// Build are the image build options (base, platforms, epoch, registry options).
	Build build.Options
	// Repo and Commit are where the catalog comes from (the pushed commit). When set, the image records
	// Commit as its build.RevisionLabel and the tag is moved only forward (see CheckForward).
	Repo   *gitrepo.Repo
	Commit *object.Commit
}

// parseTarget parses a publish target (plain HTTP allowed only on loopback).
func parseTarget(target string) (name.Reference, error) {
	ref, err := registry.ParseReference(target)
	if err != nil {
		return nil, diag.UsageError(fmt.Errorf("publish target %q: %w", target, err))
	}
	return ref, nil
}

// Publish validates the catalog again, builds its image and pushes it by digest, then moves the tag. It
// never pushes a catalog that does not validate, a failed push never moves the tag, and with Repo and
// Commit set the tag never moves to an older commit's catalog than the one it holds.
func Publish(ctx context.Context, in PublishInput) (report.Stage, string) {
	start := time.Now()
	st := report.Stage{Name: "publish"}
	defer func() { st.Duration = time.Since(start) }()
	res, err := validate.Dir(ctx, in.CatalogDir, validate.Options{Dir: diag.DirOf(in.Dir)})
	if err != nil {
		return finish(stageFromErr(err), start), ""
	}
	if !res.Valid() {
		st = stageFromDiags("not published: the catalog does not validate", res.Diagnostics)
		return finish(st, start), ""
	}
	target, err := parseTarget(in.Target)
	if err != nil {
		return finish(stageFromErr(err), start), ""
	}
	extra := make([]name.Reference, 0, len(in.Tags))
	for _, t := range in.Tags { // every tag is parsed before anything is pushed
		ref, err := parseTarget(t)
		if err != nil {
			return finish(stageFromErr(err), start), ""
		}
		extra = append(extra, ref)
	}
	opts := in.Build
	if registry.RefIsLoopback(opts.Base) {
		opts.NameOptions = append(opts.NameOptions, name.Insecure)
	}
	from := ""
	if in.Commit != nil {
		opts.Labels = maps.Clone(opts.Labels)
		if opts.Labels == nil {
			opts.Labels = map[string]string{}
		}
		opts.Labels[build.RevisionLabel] = in.Commit.Hash.String()
		if in.Repo != nil { // no tag moves unless every tag would move forward (no half-moved set)
			opts.BeforeTag = forwardOnly(in.Repo, in.Commit, append([]name.Reference{target}, extra...), opts)
		}
		from = " from " + short(in.Commit.Hash.String())
	}
	img, err := build.Image(ctx, in.CatalogDir, opts)
	if err != nil {
		return finish(stageFromErr(err), start), ""
	}
	dig, err := build.Push(ctx, img, target, opts)
	if err != nil {
		st = stageFromErr(err)
		if nf := (*NotForwardError)(nil); errors.As(err, &nf) {
			st.Summary = "tag not moved: " + nf.Summary
		}
		return finish(st, start), ""
	}
	tagged := []string{target.String()}
	for _, ref := range extra {
		if in.Commit != nil && in.Repo != nil { // checked again: another publisher may have moved it since
			opts.BeforeTag = forwardOnly(in.Repo, in.Commit, []name.Reference{ref}, opts)
		}
		if _, err := build.Push(ctx, img, ref, opts); err != nil { // the tags before this one moved: say which
			st = stageFromErr(err)
			st.Summary = fmt.Sprintf("pushed %s%s and tagged %s, but not %s", dig.String(), from, strings.Join(tagged, ", "), ref.String())
			if nf := (*NotForwardError)(nil); errors.As(err, &nf) {
				st.Summary += ": " + nf.Summary
			}
			return finish(st, start), dig.String()
		}
		tagged = append(tagged, ref.String())
	}
	st = report.Stage{Name: "publish", Status: report.Pass,
		Summary: fmt.Sprintf("pushed %s%s (%s), then tagged %s", dig.String(), from, plural(len(img.Platforms), "platform"), strings.Join(tagged, ", "))}
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
