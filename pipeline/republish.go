package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"golang.org/x/sync/errgroup"

	"github.com/catalogbot/catalogbot/build"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/report"
)

// A push to the default branch is published the same way by every front-end (the bot and the Action):
// PlanPublish reads the pushed commit's configuration and decides whether there is anything to publish;
// PublishCommit checks the commit out, renders its references config, and only when the committed
// catalog is exactly what it renders, validates, builds and pushes it (pipeline.Publish: by digest, then
// the tag).

// PublishPlan is a pushed commit that is to be published.
type PublishPlan struct {
	Commit *object.Commit
	Config *config.Config
	// Layout is the commit's layout: the catalogs published, each to its image.
	Layout *Layout
	// Platforms are publish.platforms, parsed (empty: every platform of the base).
	Platforms []v1.Platform
	// Before is the push's previous commit when it is in the repository (nil otherwise): a
	// template-driven repository renders the packages touched since then.
	Before *object.Commit
}

// ConfigAt parses .catalogbot.yaml at commit c. A missing file gives the defaults (which configure no
// publish.image); an invalid one is an error naming the file and commit: publishing stops, it never
// falls back to defaults.
func ConfigAt(repo *gitrepo.Repo, c *object.Commit) (*config.Config, error) {
	data, ok, err := repo.ReadFile(c, config.ConfigFile)
	if err != nil {
		return nil, err
	}
	if !ok {
		return config.Default(), nil
	}
	cfg, _, err := config.ParseConfig(config.ConfigFile, data)
	if err != nil {
		// never the defaults: a broken configuration stops publishing, it does not change what is published
		return nil, fmt.Errorf("%s at %s: %w", config.ConfigFile, short(c.Hash.String()), err)
	}
	return cfg, nil
}

// PlanPublish reads the configuration of the pushed commit after and decides whether to publish it. skip
// says why nothing is to be published ("" when plan is to be published): publish.image is not configured,
// or nothing the catalog is built from changed since before (when before is in the repository; an empty
// or missing before publishes).
func PlanPublish(ctx context.Context, repo *gitrepo.Repo, before, after string) (plan *PublishPlan, skip string, err error) {
	commit, err := repo.Resolve(after)
	if err != nil {
		return nil, "", fmt.Errorf("pushed commit %s: %w", short(after), err)
	}
	cfg, err := ConfigAt(repo, commit)
	if err != nil {
		return nil, "", err
	}
	layout, err := LayoutAt(cfg, commit)
	if err != nil {
		return nil, "", err
	}
	if !layout.HasImage() {
		return nil, "no catalog image is configured (" + layout.ImageSetting + " in " + config.ConfigFile + ")", nil
	}
	platforms, err := build.ParsePlatforms(cfg.Publish.Platforms)
	if err != nil {
		return nil, "", fmt.Errorf("publish.platforms in %s: %w", config.ConfigFile, err)
	}
	plan = &PublishPlan{Commit: commit, Config: cfg, Layout: layout, Platforms: platforms}
	if before == "" || strings.Trim(before, "0") == "" {
		return plan, "", nil
	}
	prev, err := repo.Resolve(before)
	if err != nil {
		return plan, "", nil // not fetched (or force-pushed away): publish
	}
	changed, err := repo.Changed(ctx, prev, commit)
	if err != nil {
		return nil, "", err
	}
	plan.Before = prev
	if !Touches(changed, publishSources(repo, commit, layout)) {
		return nil, fmt.Sprintf("nothing the catalogs are built from changed in %s..%s", short(before), short(after)), nil
	}
	return plan, "", nil
}

// publishSources are the paths the layout's catalogs are built from at commit c: its Sources, and the
// references config with what its render reads (the file itself and a local reference's directory). A
// references config that cannot be read counts as changed.
func publishSources(repo *gitrepo.Repo, c *object.Commit, l *Layout) []string {
	out := l.Sources
	if l.References == "" {
		return out
	}
	data, ok, err := repo.ReadFile(c, l.References)
	switch {
	case err != nil:
		return []string{"."}
	case !ok:
		return out
	}
	return append(slices.Clone(out), RenderSources(l.References, data)...)
}

// CommitPublish is the outcome of PublishCommit.
type CommitPublish struct {
	// Stages are the render stage (when a references config exists) and the publish stage (when the
	// render passed).
	Stages []report.Stage
	// Digest is, in a layout of one catalog, its pushed image ("repo@sha256:..."); empty when nothing
	// was pushed or the layout has several catalogs.
	Digest string
	// Digests are the pushed images by catalog name.
	Digests map[string]string
	// Rendered is the render when the committed catalog is not what the references config renders
	// (Rendered.Dir holds the rendered catalog when rendering itself succeeded); call Cleanup when done.
	Rendered Rendered
}

// Cleanup removes the rendered catalog, if any.
func (p CommitPublish) Cleanup() {
	if p.Rendered.Cleanup != nil {
		p.Rendered.Cleanup()
	}
}

// PublishCommit checks out the plan's commit, renders its references config (when the file exists) and,
// when the committed catalog is what it renders, publishes it with Publish. A catalog that differs from
// its render is not published: the last stage says why, and Rendered keeps the render.
func PublishCommit(ctx context.Context, repo *gitrepo.Repo, plan *PublishPlan, remoteOpts []remote.Option) (CommitPublish, error) {
	out := CommitPublish{Rendered: Rendered{Cleanup: func() {}}, Digests: map[string]string{}}
	cfg, layout := plan.Config, plan.Layout
	tree, cleanup, err := repo.Checkout(ctx, plan.Commit)
	if err != nil {
		return out, err
	}
	defer cleanup()
	if refs := layout.References; refs != "" {
		if _, err := os.Stat(filepath.Join(tree, filepath.FromSlash(refs))); err == nil {
			out.Rendered = RenderCatalog(ctx, RenderInput{Tree: tree, RefsFile: refs, CatalogDir: cfg.Catalog.Dir,
				Format: cfg.Catalog.Format, RemoteOptions: remoteOpts})
			if err := ctx.Err(); err != nil {
				out.Cleanup()
				return CommitPublish{}, err
			}
			out.Stages = append(out.Stages, out.Rendered.Stage)
			if out.Rendered.Stage.Status != report.Pass {
				return out, nil
			}
		}
	}
	drifted := map[string]bool{}
	if layout.Templates {
		var rst report.Stage
		rst, drifted, err = renderForPublish(ctx, repo, plan, tree, layout.Catalogs, remoteOpts, &out.Rendered)
		if err != nil {
			return out, err
		}
		if rst.Status != report.Skipped {
			out.Stages = append(out.Stages, rst)
		}
	}
	cats := layout.Catalogs
	outcomes := make([]catalogOutcome, len(cats))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(publishConcurrency)
	for i, c := range cats {
		outcomes[i].cat = c
		g.Go(func() error {
			outcomes[i].st, outcomes[i].digest = publishOne(gctx, repo, plan, tree, c, drifted[c.Name], remoteOpts)
			return nil // one catalog's failure is its own stage's; the others go on
		})
	}
	_ = g.Wait()
	if err := ctx.Err(); err != nil {
		out.Cleanup()
		return CommitPublish{}, err
	}
	out.Stages = append(out.Stages, publishSummary(outcomes))
	for _, o := range outcomes {
		if o.digest != "" {
			out.Digests[o.cat.Name] = o.digest
		}
	}
	if len(cats) == 1 {
		out.Digest = out.Digests[cats[0].Name]
	}
	return out, nil
}
