package bot

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/bot/gitcache"
	"github.com/catalogbot/catalogbot/bot/store"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/report"
)

// publishContext is the commit status context of the catalog image digest.
const publishContext = "catalogbot/publish"

// publish builds and pushes the catalog image of the default branch's new head when publish.image is
// configured and the catalog changed, and records the digest as a commit status. pipeline.Publish pushes
// by digest first and moves the tag last, so a failed publish never moves the tag.
func (jc *jobCtx) publish(ctx context.Context, t PushTask) error {
	b := jc.b
	// Always fetched, even when the pushed commit is already here: only the branch's current tip is
	// published. A push processed after a newer one (a retry, a backlog, another replica) publishes that
	// newer tip, so the newest catalog is published whatever order the pushes are handled in, and the
	// newer push's own job finds nothing left to publish or publishes the same commit again.
	dir, err := jc.fetch(ctx, nil)
	if err != nil {
		return err
	}
	repo, err := gitrepo.Open(dir)
	if err != nil {
		return err
	}
	if _, err := repo.Resolve(t.After); err != nil {
		return diag.InfraError(fmt.Errorf("pushed commit %s is not in the fetched repository: %w", short(t.After), err))
	}
	tip, err := repo.SHA(gitcache.BranchRef(t.DefaultBranch))
	if err != nil {
		return diag.InfraError(fmt.Errorf("the tip of %s: %w", t.DefaultBranch, err))
	}
	if tip != t.After {
		jc.log.Info("the branch moved on since this push: publishing its tip", "branch", t.DefaultBranch, "pushed", t.After, "tip", tip)
		t.After = tip
	}
	after := t.After
	plan, skip, err := pipeline.PlanPublish(ctx, repo, t.Before, after)
	if err != nil {
		return err
	}
	if plan == nil {
		jc.log.Info("not publishing: "+skip, "before", t.Before, "after", after)
		return nil
	}
	cfg := plan.Config
	r, err := b.store.StartRun(ctx, jc.job.ID, kindPublish, jc.target.Repo, 0, after)
	if err != nil {
		return err
	}
	r.BaseRef = t.DefaultBranch
	target := "the changed catalogs"
	if cats := plan.Layout.Catalogs; len(cats) == 1 {
		target = cats[0].Image
	}
	status := ghclient.Status{State: "pending", Context: publishContext, TargetURL: b.runURL(r.ID),
		Description: "building and pushing " + truncate(target, 100)}
	if err := jc.gh.CreateStatus(ctx, jc.repo, after, status); err != nil {
		return err
	}
	res, err := pipeline.PublishCommit(ctx, repo, plan, jc.remoteOptions())
	if err != nil {
		return err
	}
	defer res.Cleanup()
	rep := &report.Report{Title: fmt.Sprintf("publish %s at %s", jc.target.Repo, short(after)), Outputs: map[string]string{}, Stages: res.Stages}
	st := res.Stages[len(res.Stages)-1]
	if st.Name == "render" || res.Rendered.Path != "" && res.Rendered.Dir != "" {
		return jc.publishRendered(ctx, t, r, rep, status, dir, plan.Commit.Message, cfg, res.Rendered)
	}
	// one publish stage for every catalog (a layout of one has that catalog's): its details name each
	// catalog's outcome
	b.metrics.stageSeconds.WithLabelValues(st.Name, string(st.Status)).Observe(st.Duration.Seconds())
	status.State, status.Description = "success", truncate(st.Summary, 140)
	switch {
	case res.Digest != "":
		rep.Outputs["catalog_digest"] = res.Digest
		_, dig, _ := strings.Cut(res.Digest, "@")
		status.Description = "pushed " + dig
	case len(res.Digests) > 0:
		lines := make([]string, 0, len(res.Digests))
		for _, name := range slices.Sorted(maps.Keys(res.Digests)) {
			lines = append(lines, name+"="+res.Digests[name])
		}
		rep.Outputs["catalog_digests"] = strings.Join(lines, "\n")
	}
	if st.Status != report.Pass && st.Status != report.Skipped {
		status.State = "failure"
		if len(res.Digests) == 0 && !strings.HasPrefix(st.Summary, "not published") {
			status.Description = "not published: " + truncate(st.Summary+" "+st.Err, 120)
		}
	}
	return jc.finishPublish(ctx, t, r, rep, status, st)
}

// finishPublish records a publish run's outcome as the commit status and the run, or, when st failed
// for a reason that may pass (a registry error) and attempts remain, returns an error to retry it.
func (jc *jobCtx) finishPublish(ctx context.Context, t PushTask, r *store.Run, rep *report.Report, status ghclient.Status, st report.Stage) error {
	if st.Status == report.Error && jc.job.Attempts < jc.b.cfg.Queue.MaxAttempts {
		status.State, status.Description = "failure", "not published (will retry): "+truncate(st.Summary+" "+st.Err, 100)
		if err := jc.gh.CreateStatus(ctx, jc.repo, t.After, status); err != nil {
			return err
		}
		return diag.InfraError(fmt.Errorf("publish %s: %s stage: %s %s", short(t.After), st.Name, st.Summary, st.Err)) // retried
	}
	if err := jc.gh.CreateStatus(ctx, jc.repo, t.After, status); err != nil {
		return err
	}
	r.Status, r.Verdict, r.Conclusion, r.Report = store.RunCompleted, string(rep.Verdict()), status.State, rep
	return jc.b.store.FinishRun(ctx, r)
}

// renderedTrailer marks the commits that commit a rendered catalog back.
const renderedTrailer = "Rendered-by: catalogbot"

// publishRendered handles a pushed commit whose committed catalog is not what its references config
// renders. With publish.commitRendered, the rendered catalog is committed on top of it and pushed to the
// default branch (a fast-forward only), and that commit's own push publishes it; otherwise, or when
// rendering failed, nothing is published. A commit that is itself a rendered commit and still differs
// means rendering is not stable: it is never committed again.
func (jc *jobCtx) publishRendered(ctx context.Context, t PushTask, r *store.Run, rep *report.Report, status ghclient.Status, dir, pushedMessage string,
	cfg *config.Config, rd pipeline.Rendered) error {
	after, st := t.After, rd.Stage
	catalogDir, source := cfg.Catalog.Dir, cfg.References.File
	if rd.Path != "" {
		catalogDir, source = rd.Path, "the templates"
		for _, s := range rep.Stages {
			if s.Name == "render" {
				st = s
			}
		}
	}
	status.State = "failure"
	switch {
	case rd.Dir == "":
		status.Description = "not published: " + truncate(st.Summary+" "+st.Err, 120)
		return jc.finishPublish(ctx, t, r, rep, status, st)
	case !cfg.Publish.CommitRendered:
		status.Description = truncate(fmt.Sprintf("not published: %s from what %s renders (set publish.commitRendered to commit it)",
			filesDiffer(len(st.Diagnostics)), source), 140)
		return jc.finishPublish(ctx, t, r, rep, status, st)
	}
	if strings.Contains(pushedMessage, renderedTrailer) {
		status.Description = "not published: the rendered commit still differs from what " + truncate(source, 40) + " renders"
		return jc.finishPublish(ctx, t, r, rep, status, st)
	}
	message := fmt.Sprintf("Render %s from %s\n\nIn the catalog of %s, %s from what %s renders.\n\n%s\n",
		catalogDir, source, short(after), filesDiffer(len(st.Diagnostics)), source, renderedTrailer)
	sha, err := gitcache.CommitDir(dir, after, catalogDir, rd.Dir, gitcache.Signature{Name: jc.b.cfg.Checks.Name,
		Email: jc.b.cfg.Checks.Name + "@users.noreply.github.com"}, message, time.Now())
	if err != nil {
		return fmt.Errorf("commit the rendered catalog of %s: %w", short(after), err)
	}
	token, err := jc.gh.GitToken(ctx)
	if err != nil {
		return diag.InfraError(err)
	}
	err = jc.b.git.Push(ctx, jc.repo.Owner, jc.repo.Name, token, sha, t.DefaultBranch, after)
	switch {
	case errors.Is(err, gitcache.ErrBranchMoved):
		status.Description = truncate("not published: "+t.DefaultBranch+" moved on before the rendered catalog was committed; its newer push publishes", 140)
		st.Summary += "; " + err.Error()
	case err != nil:
		return err // retried
	default:
		status.State = "success"
		status.Description = "rendered catalog committed as " + short(sha) + "; its push publishes it"
		rep.Outputs["rendered_commit"] = sha
		st.Status = report.Pass
		st.Summary = fmt.Sprintf("%s from what %s renders: committed the rendered catalog as %s", filesDiffer(len(st.Diagnostics)),
			source, sha)
		jc.log.Info("committed the rendered catalog", "sha", after, "rendered", sha)
	}
	for i := range rep.Stages {
		if rep.Stages[i].Name == st.Name {
			rep.Stages[i] = st
		}
	}
	return jc.finishPublish(ctx, t, r, rep, status, st)
}

func filesDiffer(n int) string {
	if n == 1 {
		return "1 file differs"
	}
	return fmt.Sprintf("%d files differ", n)
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
