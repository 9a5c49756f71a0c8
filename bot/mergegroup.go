package bot

import (
	"context"
	"fmt"
	"strings"

	"github.com/catalogbot/catalogbot/bot/checkrun"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/report"
)

// mergeGroup runs the pipeline on a merge queue group (base_sha..head_sha) and reports a check run on the
// group's head. Ownership was decided on each pull request of the group, so the owners stage is reported
// as skipped here; everything else (validate, graph, images) runs on the combined change.
func (jc *jobCtx) mergeGroup(ctx context.Context) error {
	b := jc.b
	head := jc.task.HeadSHA
	r, err := b.store.startRun(ctx, jc.job.ID, kindMergeGroup, jc.task.Repo, 0, head)
	if err != nil {
		return err
	}
	r.BaseRef, r.BaseSHA, r.Tip = strings.TrimPrefix(jc.task.HeadRef, "refs/heads/"), jc.task.BaseSHA, jc.task.BaseSHA
	cr := newCheckReporter(jc, r, head)
	if err := cr.start(ctx); err != nil {
		return err
	}
	rep, err := jc.runGroup(ctx, cr)
	if ctx.Err() != nil {
		cr.cancelled(context.Cause(ctx))
		return ctx.Err()
	}
	if err != nil {
		if diag.CategoryOf(err) == diag.Infra && jc.job.Attempts < b.cfg.Queue.MaxAttempts {
			return err
		}
		rep = errorReport(err)
	}
	rep.Title = fmt.Sprintf("merge group %s at %s", jc.task.HeadRef, short(head))
	if err := cr.complete(ctx, rep); !checkrun.IsNotOwner(err) {
		return err
	}
	jc.log.Info("merge group check not reported: its run was settled or taken over meanwhile", "run", r.ID)
	return nil
}

func (jc *jobCtx) runGroup(ctx context.Context, cr *checkReporter) (*report.Report, error) {
	dir, err := jc.fetch(ctx, []string{jc.task.BaseSHA, jc.task.HeadSHA})
	if err != nil {
		return nil, err
	}
	repo, err := gitrepo.Open(dir)
	if err != nil {
		return nil, err
	}
	for _, sha := range []string{jc.task.BaseSHA, jc.task.HeadSHA} {
		if _, err := repo.SHA(sha); err != nil {
			return nil, diag.InfraError(fmt.Errorf("merge group commit %s is not in the fetched repository: %w", short(sha), err))
		}
	}
	rep, err := pipeline.Run(ctx, pipeline.Input{Repo: repo, Base: jc.task.BaseSHA, Head: jc.task.HeadSHA,
		Membership: &membership{gh: jc.gh, cache: map[string]bool{}}, RemoteOptions: jc.remoteOptions(), Smoke: jc.b.smokeInput(),
		SkipImages: jc.b.cfg.Checks.SkipImages, Observer: cr})
	if err != nil {
		return nil, err
	}
	for i, s := range rep.Stages {
		if s.Name == "owners" {
			rep.Stages[i] = report.Stage{Name: "owners", Status: report.Skipped, Duration: s.Duration,
				Summary: "ownership was checked on each pull request of the group"}
		}
	}
	return rep, nil
}
