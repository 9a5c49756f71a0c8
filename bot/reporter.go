package bot

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/catalogbot/catalogbot/bot/checkrun"
	"github.com/catalogbot/catalogbot/bot/store"
	"github.com/catalogbot/catalogbot/report"
)

// checkReporter keeps one run's check run up to date through the check run owner (checkrun.Owner):
// in progress at once, updated as stages start (throttled), completed with the report's rendering
// (report.CheckRun). It is the pipeline's Observer and keeps the run's log.
type checkReporter struct {
	jc      *jobCtx
	run     *store.Run
	ref     checkrun.Ref
	last    time.Time
	stages  []string
	mu      sync.Mutex // guards pending: stages log from their workers
	pending strings.Builder
	// ctx is the job's context, for the progress updates StageStarted makes (an observer takes none).
	ctx context.Context
}

func newCheckReporter(jc *jobCtx, r *store.Run, sha string) *checkReporter {
	return &checkReporter{jc: jc, run: r, ref: checkrun.Ref{Run: r.ID, Repo: jc.repo, HeadSHA: sha,
		DetailsURL: jc.b.runURL(r.ID), Attempt: jc.job.Attempts}}
}

func (c *checkReporter) start(ctx context.Context) error {
	jc := c.jc
	c.ctx = ctx
	id, created, err := jc.b.checks.Start(ctx, jc.gh, c.ref, "Running", fmt.Sprintf("catalogbot is checking %s (job %d, attempt %d).",
		short(c.ref.HeadSHA), jc.job.ID, jc.job.Attempts))
	if err != nil {
		return err
	}
	if created {
		jc.b.metrics.inProgress.WithLabelValues("worker").Observe(time.Since(jc.job.Created).Seconds())
	}
	c.last = timeNow()
	c.logf("check run %d in progress on %s", id, short(c.ref.HeadSHA))
	return c.flush(ctx)
}

// logf adds a line to the run's log (written to the database by flush, to keep writes per run few).
func (c *checkReporter) logf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending.WriteString(timeNow().UTC().Format("15:04:05.000") + " " + fmt.Sprintf(format, args...) + "\n")
}

func (c *checkReporter) flush(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending.Len() == 0 {
		return nil
	}
	err := c.jc.b.store.AppendLog(context.WithoutCancel(ctx), c.run.ID, c.pending.String())
	c.pending.Reset()
	return err
}

// StageStarted records the stage and, at most every ProgressInterval, shows it on the check run.
func (c *checkReporter) StageStarted(stage string) {
	c.stages = append(c.stages, stage)
	c.logf("stage %s started", stage)
	iv := c.jc.b.cfg.Checks.ProgressInterval
	if iv < 0 || timeNow().Sub(c.last) < iv {
		return
	}
	c.last = timeNow()
	err := c.jc.b.checks.Progress(c.ctx, c.jc.gh, c.ref, "Running: "+stage, "Stages started so far: "+strings.Join(c.stages, ", ")+".")
	if err != nil {
		c.jc.log.Warn("per-stage check run update failed", "err", err)
	}
}

// StageLog keeps a stage's own progress lines in the run's log (never in the check run).
func (c *checkReporter) StageLog(stage, line string) { c.logf("%s: %s", stage, line) }

// StageDone records the stage's result in the run's log.
func (c *checkReporter) StageDone(s report.Stage) {
	c.logf("stage %s %s in %s", s.Name, s.Status, s.Duration.Round(time.Millisecond))
}

// complete posts the outcome and records the run. checkrun.ErrNotOwner: the run was settled meanwhile
// (superseded) or a newer attempt holds it; nothing is written.
func (c *checkReporter) complete(ctx context.Context, rep *report.Report) error {
	jc := c.jc
	out := report.CheckRun(rep, jc.b.cfg.Checks.MaxAnnotations)
	if err := jc.b.checks.Complete(ctx, jc.gh, c.ref, out); err != nil {
		return err
	}
	c.run.Status, c.run.Verdict, c.run.Conclusion, c.run.Report = store.RunCompleted, string(rep.Verdict()), out.Conclusion, rep
	c.logf("completed: %s (%s)", out.Conclusion, out.Title)
	if err := c.flush(ctx); err != nil {
		return err
	}
	return jc.b.store.FinishRun(ctx, c.run)
}

// cancelled closes the check run of a stopped check as checkrun.Interrupted says: cancelled when superseded,
// failed past its deadline. At shutdown it stays in progress: the job is requeued and the next attempt
// takes it over.
func (c *checkReporter) cancelled(cause error) {
	ctx, done := context.WithTimeout(context.Background(), 15*time.Second)
	defer done()
	jc := c.jc
	c.logf("%s", checkrun.StopReason(cause))
	if err := c.flush(ctx); err != nil {
		jc.log.Warn("recording the run's log failed", "err", err)
	}
	e, ok := checkrun.Interrupted(cause)
	if !ok {
		return
	}
	if _, err := jc.b.checks.Settle(ctx, jc.gh, c.ref, []checkrun.State{checkrun.Queued, checkrun.InProgress}, e.Conclusion, e.Title,
		e.Summary); err != nil {
		jc.log.Warn("closing the cancelled check run failed", "err", err)
	}
	c.run.Status, c.run.Conclusion = settledStatus(e), e.Conclusion
	if err := jc.b.store.FinishRun(ctx, c.run); err != nil {
		jc.log.Warn("recording the cancelled run failed", "err", err)
	}
}
