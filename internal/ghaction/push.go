package ghaction

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/build"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/report"
)

// pushEvent is the subset of a push payload the action needs.
type pushEvent struct {
	Ref        string `json:"ref"`
	Before     string `json:"before"`
	After      string `json:"after"`
	Deleted    bool   `json:"deleted"`
	Repository struct {
		FullName      string `json:"full_name"`
		DefaultBranch string `json:"default_branch"`
	} `json:"repository"`
}

// runPush publishes the default branch's tip on a push to it, as the bot does (pipeline.PlanPublish and
// PublishCommit): the committed catalog must be what its references config renders, validate, and it is
// pushed by digest and then tagged, the tag moving only forward. A push that is not the branch's current
// tip publishes nothing: the newer push's run publishes, comparing with the commit the tag holds, so
// runs cancelled or finished out of order lose nothing. With Options.Release it then releases the bundle
// directories the push added (release.go), whether or not the push is still the tip.
func runPush(ctx context.Context, env Env, data []byte, path string, o Options) (*report.Report, error) {
	var ev pushEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return nil, diag.UsageError(fmt.Errorf("event payload %s: %w", path, err))
	}
	if ev.After == "" || ev.Repository.FullName == "" || ev.Repository.DefaultBranch == "" {
		return nil, diag.UsageError(fmt.Errorf("event payload %s has no push (after, repository.full_name, repository.default_branch)", path))
	}
	branch := ev.Repository.DefaultBranch
	r := &report.Report{Title: fmt.Sprintf("publish %s at %s", ev.Repository.FullName, short(ev.After)), Outputs: map[string]string{"head_sha": ev.After}}
	why := ""
	switch {
	case ev.Ref != "refs/heads/"+branch:
		why = fmt.Sprintf("%s is not a push to the default branch %s", ev.Ref, branch)
	case ev.Deleted:
		why = fmt.Sprintf("the push deleted %s", ev.Ref)
	}
	if why != "" {
		r.Stages = append(r.Stages, report.Stage{Name: "publish", Status: report.Skipped, Summary: "not published: " + why})
		if o.Release {
			r.Stages = append(r.Stages, report.Stage{Name: releaseCheck, Status: report.Skipped, Summary: "not released: " + why})
		}
		return r, nil
	}
	gh, err := newGitHub(env)
	if err != nil {
		return nil, err
	}
	if gh == nil {
		return nil, diag.UsageError(fmt.Errorf("publishing needs the workflow's token to read the tip of %s: pass github-token (the default, ${{ github.token }}, is enough)", branch))
	}
	repoName, err := ghclient.ParseRepo(ev.Repository.FullName)
	if err != nil {
		return nil, diag.UsageError(err)
	}
	if err := publish(ctx, gh, repoName, &ev, o, r); err != nil {
		return nil, err
	}
	if o.Release {
		if err := releaseStage(ctx, gh, repoName, env("CATALOGBOT_GITHUB_TOKEN"), &ev, o, r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// publish adds the publish stages of the push's commit to r.
func publish(ctx context.Context, gh ghclient.GitHub, repoName ghclient.Repo, ev *pushEvent, o Options, r *report.Report) error {
	branch := ev.Repository.DefaultBranch
	skip := func(why string) error {
		r.Stages = append(r.Stages, report.Stage{Name: "publish", Status: report.Skipped, Summary: why})
		return nil
	}
	tip, err := gh.BranchSHA(ctx, repoName, branch)
	if err != nil {
		return diag.InfraError(err)
	}
	if tip != ev.After {
		return skip(fmt.Sprintf("not published: %s moved on to %s since this push; that push's run publishes it", branch, short(tip)))
	}
	repo, err := gitrepo.Open(o.RepoDir)
	if err != nil {
		return err
	}
	commit, err := checkedOut(repo, ev.After, "pushed commit")
	if err != nil {
		return err
	}
	cfg, err := pipeline.ConfigAt(repo, commit)
	if err != nil {
		return err
	}
	since := ""
	if cfg.Publish.Image != "" {
		// What the tag holds, not the push's before, is what this push changes: a cancelled or failed
		// run of an earlier push leaves its changes to be published by this one.
		rev, found, err := pipeline.TagRevision(ctx, cfg.Publish.Image, build.Options{})
		if err != nil {
			return err
		}
		if found && rev != "" {
			if held, err := repo.Resolve(rev); err == nil {
				if ok, err := held.IsAncestor(commit); err == nil && ok {
					since = rev
				}
			}
		}
	}
	plan, why, err := pipeline.PlanPublish(ctx, repo, since, ev.After)
	if err != nil {
		return err
	}
	if plan == nil {
		return skip("not published: " + why)
	}
	res, err := pipeline.PublishCommit(ctx, repo, plan, nil)
	if err != nil {
		return err
	}
	defer res.Cleanup()
	r.Stages = append(r.Stages, res.Stages...)
	if last := &r.Stages[len(r.Stages)-1]; last.Name == "render" && res.Rendered.Dir != "" {
		last.Status = report.Fail
		last.Summary = strings.TrimSpace(fmt.Sprintf("not published: the committed catalog is not what %s renders (run catalogbot render and commit it); %s",
			cfg.References.File, last.Summary))
	}
	if res.Digest != "" {
		r.Outputs["catalog_digest"] = res.Digest
	}
	if len(res.Digests) > 0 {
		lines := make([]string, 0, len(res.Digests))
		for _, name := range slices.Sorted(maps.Keys(res.Digests)) {
			lines = append(lines, name+"="+res.Digests[name])
		}
		r.Outputs["catalog_digests"] = strings.Join(lines, "\n")
	}
	if res.Rendered.Path != "" && res.Rendered.Dir != "" {
		for i := range r.Stages {
			if s := &r.Stages[i]; s.Name == "render" {
				s.Summary = "not published: the committed catalogs are not what their templates render (run catalogbot render and commit it); " + s.Summary
			}
		}
	}
	return nil
}

// checkedOut is commit sha of the checkout g; what names it in the error when the checkout lacks it.
func checkedOut(g *gitrepo.Repo, sha, what string) (*object.Commit, error) {
	c, err := g.Resolve(sha)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w (check out with fetch-depth: 0)", what, short(sha), err)
	}
	return c, nil
}
