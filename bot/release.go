package bot

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/bot/queue"
	"github.com/catalogbot/catalogbot/bot/store"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/pipeline"
)

// BundlePusher builds a bundle image from a bundle directory (manifests/ and metadata/, the annotations as
// labels) and pushes it as ref, returning the reference by digest. remote holds the job's registry
// options: its transport (deadlines, the job's breaker) and its repository's credentials only.
type BundlePusher interface {
	Push(ctx context.Context, dir, ref string, remote []remote.Option) (digestRef string, err error)
}

// Release job kinds.
const (
	kindReleases = "releases" // find the bundle directories a push to the default branch added
	kindRelease  = "release"  // release one of them: image, templates and catalogs, one pull request
)

// releaseJob is the job releasing bundle directory dir of t's push. Its delivery names the repository and
// the directory, so a redelivered push, or the same directory found again, queues nothing twice.
func releaseJob(event string, t PushTask, dir string) (*queue.Job, error) {
	j, err := newJob(event, kindRelease, ReleaseTask{PushTask: t, Bundle: dir}, "", false, true)
	if err != nil {
		return nil, err
	}
	j.Delivery = "release:" + strings.ToLower(t.Repo) + ":" + dir
	return j, nil
}

// pushScan looks at what a push to the default branch added: the catalogs its configuration gained are
// promoted into (promotions), and, when this bot has a bundle image pusher, the bundle directories are
// released (releases). A push that created the branch (no before commit) does neither: that is a
// repository's history, not a merge.
func (jc *jobCtx) pushScan(ctx context.Context, t PushTask) error {
	if strings.Trim(t.Before, "0") == "" {
		jc.log.Info("not releasing or promoting: the push created the branch")
		return nil
	}
	dir, err := jc.fetch(ctx, []string{t.Before, t.After})
	if err != nil {
		return err
	}
	repo, err := gitrepo.Open(dir)
	if err != nil {
		return err
	}
	before, err := repo.Resolve(t.Before)
	if err != nil {
		if jc.b.pusher == nil {
			// Nothing to compare the configuration with (a force push dropped it): no catalog was added.
			jc.log.Info("not promoting: the push's before commit is not in the fetched repository", "before", short(t.Before))
			return nil
		}
		return diag.InfraError(fmt.Errorf("the push's before commit %s is not in the fetched repository: %w", short(t.Before), err))
	}
	after, err := repo.Resolve(t.After)
	if err != nil {
		return diag.InfraError(fmt.Errorf("pushed commit %s is not in the fetched repository: %w", short(t.After), err))
	}
	if err := jc.promotions(ctx, t, repo, before, after); err != nil {
		return err
	}
	if jc.b.pusher == nil {
		return nil
	}
	return jc.releases(ctx, t, repo, before, after)
}

// releases queues a release job for each bundle directory with a release-config.yaml that the push added
// (a directory the push's before commit has no release-config.yaml in).
func (jc *jobCtx) releases(ctx context.Context, t PushTask, repo *gitrepo.Repo, before, after *object.Commit) error {
	// The repository opts in by naming its bundle images (release.bundleImage of the pushed commit's
	// configuration, the default branch's); a configuration that does not parse fails the scan.
	cfg, err := pipeline.ConfigAt(repo, after)
	if err != nil {
		return diag.UsageError(err)
	}
	if cfg.Release.BundleImage == "" {
		jc.log.Info("not releasing: the configuration names no release.bundleImage")
		return nil
	}
	dirs, err := pipeline.ReleasesAdded(ctx, repo, before, after)
	if err != nil {
		return err
	}
	for _, d := range dirs {
		j, err := releaseJob(jc.job.Event, t, d)
		if err != nil {
			return err
		}
		res, err := jc.b.enqueue(ctx, j, t, "")
		if err != nil {
			return fmt.Errorf("queue the release of %s: %w", d, err)
		}
		jc.log.Info("release queued", "bundle", d, "job", res.ID, "duplicate", res.Duplicate)
	}
	return nil
}

// release releases one bundle directory: pushes its image, applies its release-config.yaml to the
// templates and renders the catalogs at the push's commit, commits that on the release branch and opens
// one pull request, which is then checked like any other. Each step is recorded (releases table) before
// the next, and each looks for what an earlier attempt did first: the pull request of the branch, the
// image already pushed, the branch already at the release commit (which is computed the same way every
// time: same files, message and time on the same parent).
func (jc *jobCtx) release(ctx context.Context, t ReleaseTask) error {
	b := jc.b
	if b.pusher == nil {
		return queue.Permanent(fmt.Errorf("release %s: this bot has no bundle image pusher", t.Bundle))
	}
	row, err := b.store.Releases().Start(ctx, &store.Release{AppPR: store.AppPR{Repo: t.Repo, Dir: t.Bundle, PushSHA: t.After}})
	if err != nil {
		return err
	}
	names := pipeline.ReleaseNamesOf(row.Dir)
	row.Branch = names.Branch
	j := &appPRJob{rec: row, save: func(ctx context.Context) error { return b.store.Releases().Save(ctx, row) },
		name: "release " + row.Dir, noun: "release", done: "already released", attrs: []any{"bundle", row.Dir}, base: t.DefaultBranch}
	j.change = func(ctx context.Context, pc *pushCheckout) (*appPRChange, error) {
		return jc.releaseChange(ctx, pc, row, names, j.save)
	}
	return jc.runAppPRJob(ctx, j)
}

// releaseChange pushes the bundle image of row (once: recorded with save) and computes the release at the
// pushed commit's checkout pc: the edited templates and the rendered catalogs.
func (jc *jobCtx) releaseChange(ctx context.Context, pc *pushCheckout, row *store.Release, names pipeline.ReleaseNames,
	save func(context.Context) error) (*appPRChange, error) {
	_, _, ref, err := pipeline.ReleaseImage(pc.cfg, row.Dir)
	if err != nil {
		return nil, err
	}
	if row.Image == "" {
		digest, err := jc.b.pusher.Push(ctx, filepath.Join(pc.work, filepath.FromSlash(row.Dir)), ref, jc.remoteOptions())
		if err != nil {
			return nil, diag.InfraError(fmt.Errorf("pushing bundle image %s: %w", ref, err))
		}
		row.Image = digest
		if err := save(ctx); err != nil {
			return nil, err
		}
		jc.log.Info("bundle image pushed", "bundle", row.Dir, "image", digest)
	}
	rel, err := pipeline.ComputeRelease(ctx, pc.work, pc.cfg, pc.layout, row.Dir, jc.remoteOptions())
	if err != nil {
		return nil, err
	}
	return &appPRChange{files: rel.Files, message: rel.Message(names, row.Image, row.PushSHA), title: names.Title,
		body: func(commit string) string { return rel.Body(row.Dir, row.Image, row.PushSHA, commit) }}, nil
}
