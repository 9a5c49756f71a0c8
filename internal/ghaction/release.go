package ghaction

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/bot/gitcache"
	"github.com/catalogbot/catalogbot/build/bundleimage"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/report"
)

// releaseCheck names the push's release stage.
const releaseCheck = "release"

// releaseAuthor writes the release commits: the identity GitHub gives the workflow's token.
var releaseAuthor = gitcache.Signature{Name: "github-actions[bot]", Email: "41898282+github-actions[bot]@users.noreply.github.com"}

// releaser releases, with the workflow's token, the bundle directories a push to the default branch
// added, as the App's release job does (bot/release.go) but with no record of its own: what an earlier
// run did is read back from GitHub (the release branch's pull request) and the registry (the tag).
type releaser struct {
	gh     ghclient.GitHub
	repo   ghclient.Repo
	token  string
	base   string // the default branch: the pull requests' base
	dir    string // the checkout: its object store gets the release commits, its origin the branches
	git    *gitrepo.Repo
	after  *object.Commit
	cfg    *config.Config
	layout *pipeline.Layout
}

// release is one bundle directory released: its image by digest and its pull request.
type release struct {
	names pipeline.ReleaseNames
	dir   string
	image string
	pr    *ghclient.PullRequest
}

// releaseStage releases each bundle directory (operators/<package>/<version>) the push added a
// release-config.yaml in, read from the checkout between the push's before and after commits (never
// from the payload's file lists), when the pushed commit's configuration names its bundle images
// (release.bundleImage). A bundle that cannot be released is named in the stage's error and in the
// release_failed output; the others are released all the same.
func releaseStage(ctx context.Context, gh ghclient.GitHub, repo ghclient.Repo, token string, ev *pushEvent, o Options, r *report.Report) error {
	start := time.Now()
	skip := func(why string) error {
		r.Stages = append(r.Stages, report.Stage{Name: releaseCheck, Status: report.Skipped, Summary: "not released: " + why})
		return nil
	}
	if strings.Trim(ev.Before, "0") == "" {
		return skip("the push created " + ev.Repository.DefaultBranch)
	}
	g, err := gitrepo.Open(o.RepoDir)
	if err != nil {
		return err
	}
	before, err := checkedOut(g, ev.Before, "the push's before commit")
	if err != nil {
		return err
	}
	after, err := checkedOut(g, ev.After, "pushed commit")
	if err != nil {
		return err
	}
	cfg, err := pipeline.ConfigAt(g, after)
	if err != nil {
		return diag.UsageError(err)
	}
	if cfg.Release.BundleImage == "" {
		return skip("the configuration names no release.bundleImage")
	}
	dirs, err := pipeline.ReleasesAdded(ctx, g, before, after)
	if err != nil {
		return err
	}
	if len(dirs) == 0 {
		return skip("the push adds no bundle directory with a release-config.yaml")
	}
	layout, err := pipeline.LayoutAt(cfg, after)
	if err != nil {
		return diag.UsageError(err)
	}
	rl := &releaser{gh: gh, repo: repo, token: token, base: ev.Repository.DefaultBranch, dir: o.RepoDir, git: g, after: after, cfg: cfg, layout: layout}
	st := report.Stage{Name: releaseCheck, Status: report.Pass}
	var done []*release
	var failed, errs []string
	for _, d := range dirs {
		x, err := rl.one(ctx, d)
		if err != nil {
			err = fmt.Errorf("release %s: %w", d, err)
			st.Status = report.Worse(st.Status, report.StatusOf(nil, err))
			failed, errs = append(failed, d), append(errs, err.Error())
			continue
		}
		done = append(done, x)
	}
	st.Summary = fmt.Sprintf("%d of %d bundles released", len(done), len(dirs))
	st.Err, st.Duration = strings.Join(errs, "\n"), time.Since(start)
	var lines, prs []string
	var table strings.Builder
	for _, x := range done {
		lines = append(lines, fmt.Sprintf("%s %s %s %s", x.names.Package, x.names.Version, x.image, x.pr.HTMLURL))
		prs = append(prs, fmt.Sprint(x.pr.Number))
		if table.Len() == 0 {
			table.WriteString("| bundle | image | pull request |\n|---|---|---|\n")
		}
		fmt.Fprintf(&table, "| %s | %s | [#%d](%s) |\n", report.CodeSpan(x.dir), report.CodeSpan(x.image), x.pr.Number, x.pr.HTMLURL)
	}
	st.Details = table.String()
	r.Stages = append(r.Stages, st)
	if len(done) > 0 {
		r.Outputs["released"], r.Outputs["release_prs"] = strings.Join(lines, "\n"), strings.Join(prs, " ")
	}
	if len(failed) > 0 {
		r.Outputs["release_failed"] = strings.Join(failed, "\n")
	}
	return nil
}

// one releases bundle directory dir, in the order that leaves nothing half-written: the release is
// computed (templates and catalogs, in a throw-away checkout of the pushed commit) and refused before
// anything is pushed when its release-config.yaml cannot be applied; then the bundle image is pushed by
// digest then tag (a tag holding another image is never replaced); then the release commit, a function of
// its inputs, goes on the release branch and its pull request is opened. A run again (a re-run of the
// workflow) computes the same commit and finds the branch and its pull request instead of opening another.
func (rl *releaser) one(ctx context.Context, dir string) (*release, error) {
	names := pipeline.ReleaseNamesOf(dir)
	_, _, ref, err := pipeline.ReleaseImage(rl.cfg, dir)
	if err != nil {
		return nil, err
	}
	work, cleanup, err := rl.git.Checkout(ctx, rl.after)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	rel, err := pipeline.ComputeRelease(ctx, work, rl.cfg, rl.layout, dir, nil)
	if err != nil {
		return nil, err
	}
	image, err := bundleimage.Push(ctx, dir, ref, bundleimage.WithRepository(work))
	if err != nil {
		return nil, err
	}
	from := rl.after.Hash.String()
	sha, err := gitcache.CommitFiles(rl.dir, from, rel.Files, releaseAuthor, rel.Message(names, image, from), rl.after.Committer.When)
	if err != nil {
		return nil, fmt.Errorf("commit the release: %w", err)
	}
	pr, err := rl.gh.FindPullRequest(ctx, rl.repo, names.Branch)
	if err != nil {
		return nil, diag.InfraError(err)
	}
	if pr == nil {
		if err := gitcache.PushBranch(ctx, rl.dir, rl.repo.String(), rl.token, sha, names.Branch, ""); err != nil {
			if errors.Is(err, gitcache.ErrBranchMoved) {
				return nil, diag.UsageError(fmt.Errorf("%w; delete the branch to release again", err))
			}
			return nil, err
		}
		np := ghclient.NewPullRequest{Title: names.Title, Body: rel.Body(dir, image, from, sha), Head: names.Branch, Base: rl.base}
		if pr, err = ghclient.OpenOrFind(ctx, rl.gh, rl.repo, np); err != nil {
			return nil, diag.InfraError(err)
		}
	}
	if pr.HeadSHA != sha {
		return nil, diag.UsageError(fmt.Errorf("branch %s already has pull request #%d at %s, not the release commit %s; "+
			"close it and delete the branch to release again", names.Branch, pr.Number, short(pr.HeadSHA), short(sha)))
	}
	return &release{names: names, dir: dir, image: image, pr: pr}, nil
}
