package bot

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/bot/gitcache"
	"github.com/catalogbot/catalogbot/build"
	"github.com/catalogbot/catalogbot/internal/diag"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/pipeline/report"
)

// publishContext is the commit status context of the catalog image digest.
const publishContext = "catalogbot/publish"

// publish builds and pushes the catalog image of the default branch's new head when publish.image is
// configured and the catalog changed, and records the digest as a commit status. pipeline.Publish pushes
// by digest first and moves the tag last, so a failed publish never moves the tag.
func (jc *jobCtx) publish(ctx context.Context) error {
	b := jc.b
	after := jc.task.After
	dir, err := jc.fetch(ctx, []string{after})
	if err != nil {
		return err
	}
	if _, err := gitcache.Resolve(dir, after); err != nil {
		return diag.InfraError(fmt.Errorf("pushed commit %s is not in the fetched repository: %w", short(after), err))
	}
	cfg, err := readConfig(dir, after)
	if err != nil {
		return err
	}
	if cfg.Publish.Image == "" {
		jc.log.Info("publish.image is not configured: nothing to publish", "sha", after)
		return nil
	}
	if before := jc.task.Before; before != "" {
		if _, err := gitcache.Resolve(dir, before); err == nil {
			touched, _, err := gitcache.TouchedTopDirs(ctx, dir, before, after, cfg.Catalog.Dir)
			if err != nil {
				return err
			}
			if len(touched) == 0 {
				jc.log.Info("the catalog did not change: not publishing", "before", before, "after", after)
				return nil
			}
		}
	}
	r, err := b.store.startRun(ctx, jc.job.ID, kindPublish, jc.task.Repo, 0, after)
	if err != nil {
		return err
	}
	r.BaseRef = jc.task.DefaultBranch
	status := ghclient.Status{State: "pending", Context: publishContext, TargetURL: b.runURL(r.ID),
		Description: "building and pushing " + truncate(cfg.Publish.Image, 100)}
	if err := jc.gh.CreateStatus(ctx, jc.repo, after, status); err != nil {
		return err
	}
	var platforms []v1.Platform
	for _, p := range cfg.Publish.Platforms {
		pl, err := v1.ParsePlatform(p)
		if err != nil {
			return fmt.Errorf("publish.platforms %q: %w", p, err)
		}
		platforms = append(platforms, *pl)
	}
	repo, err := pipeline.OpenRepo(dir)
	if err != nil {
		return err
	}
	commit, err := repo.Resolve(after)
	if err != nil {
		return err
	}
	tree, cleanup, err := repo.Checkout(ctx, commit)
	if err != nil {
		return err
	}
	defer cleanup()
	st, digest := pipeline.Publish(ctx, pipeline.PublishInput{CatalogDir: filepath.Join(tree, filepath.FromSlash(cfg.Catalog.Dir)),
		Target: cfg.Publish.Image, Build: build.Options{Base: cfg.Publish.Base, Platforms: platforms, RemoteOptions: b.remote}})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	rep := &report.Report{Title: fmt.Sprintf("publish %s at %s", jc.task.Repo, short(after)), Stages: []report.Stage{st},
		Outputs: map[string]string{}}
	dig := digest
	if _, d, ok := strings.Cut(digest, "@"); ok {
		dig = d
	}
	status.State, status.Description = "success", "pushed "+dig
	if digest != "" {
		rep.Outputs["catalog_digest"] = digest
	} else {
		status.State = "failure"
		status.Description = "not published: " + truncate(st.Summary+" "+st.Err, 120)
		if st.Status == report.Error && jc.job.Attempts < b.cfg.Queue.MaxAttempts {
			if err := jc.gh.CreateStatus(ctx, jc.repo, after, status); err != nil {
				return err
			}
			return diag.InfraError(fmt.Errorf("publish %s: %s", cfg.Publish.Image, st.Err)) // retried
		}
	}
	b.metrics.stageSeconds.WithLabelValues(st.Name, string(st.Status)).Observe(st.Duration.Seconds())
	if err := jc.gh.CreateStatus(ctx, jc.repo, after, status); err != nil {
		return err
	}
	r.Status, r.Verdict, r.Conclusion, r.Report = runCompleted, string(rep.Verdict()), status.State, rep
	return b.store.finishRun(ctx, r)
}

// truncate cuts s to n bytes (GitHub limits a status description to 140 characters).
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n-1] + "…"
}
