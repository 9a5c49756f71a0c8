package pipeline

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

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
	multi := cfg.MultiCatalog()
	switch {
	case multi && !multiImages(cfg):
		return nil, "no catalog image is configured (catalogs.image in " + config.ConfigFile + ")", nil
	case !multi && cfg.Publish.Image == "":
		return nil, "publish.image is not configured in " + config.ConfigFile, nil
	}
	platforms, err := build.ParsePlatforms(cfg.Publish.Platforms)
	if err != nil {
		return nil, "", fmt.Errorf("publish.platforms in %s: %w", config.ConfigFile, err)
	}
	plan = &PublishPlan{Commit: commit, Config: cfg, Platforms: platforms}
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
	if multi {
		if !Touches(changed, multiSources(cfg)) {
			return nil, fmt.Sprintf("no template or catalog changed in %s..%s", short(before), short(after)), nil
		}
		return plan, "", nil
	}
	if !catalogChanged(repo, commit, cfg, changed) {
		return nil, fmt.Sprintf("nothing the catalog is built from changed in %s..%s", short(before), short(after)), nil
	}
	return plan, "", nil
}

// catalogChanged tells whether a changed path is in the catalog directory or is read by the render of
// the references config (the file itself or a local reference's directory).
func catalogChanged(repo *gitrepo.Repo, c *object.Commit, cfg *config.Config, changed []string) bool {
	dir := path.Clean(cfg.Catalog.Dir)
	if Touches(changed, []string{dir}) {
		return true
	}
	if cfg.References.File == "" {
		return false
	}
	data, ok, err := repo.ReadFile(c, cfg.References.File)
	if err != nil || !ok {
		return err != nil
	}
	return Touches(changed, RenderSources(cfg.References.File, data))
}

// CommitPublish is the outcome of PublishCommit.
type CommitPublish struct {
	// Stages are the render stage (when a references config exists) and the publish stage (when the
	// render passed).
	Stages []report.Stage
	// Digest is the pushed image ("repo@sha256:..."), empty when nothing was pushed.
	Digest string
	// Digests are, in a template-driven repository, the pushed images by catalog name (Digest is empty).
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
	if plan.Config.MultiCatalog() {
		return publishCatalogs(ctx, repo, plan, remoteOpts)
	}
	out := CommitPublish{Rendered: Rendered{Cleanup: func() {}}}
	cfg := plan.Config
	tree, cleanup, err := repo.Checkout(ctx, plan.Commit)
	if err != nil {
		return out, err
	}
	defer cleanup()
	if refs := cfg.References.File; refs != "" {
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
	st, digest := Publish(ctx, PublishInput{CatalogDir: filepath.Join(tree, filepath.FromSlash(cfg.Catalog.Dir)),
		Target: cfg.Publish.Image, Repo: repo, Commit: plan.Commit,
		Build: build.Options{Base: cfg.Publish.Base, Platforms: plan.Platforms, RemoteOptions: remoteOpts}})
	if err := ctx.Err(); err != nil {
		out.Cleanup()
		return CommitPublish{}, err
	}
	out.Stages = append(out.Stages, st)
	out.Digest = digest
	return out, nil
}
