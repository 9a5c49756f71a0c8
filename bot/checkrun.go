package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/bot/queue"
	"github.com/catalogbot/catalogbot/report"
)

// annotationsPerRequest is GitHub's limit of annotations per check run create or update request.
const annotationsPerRequest = 50

// checkReporter keeps one run's check run up to date: created in progress at once, updated as stages
// start (throttled), completed with the summary and annotations. It is the pipeline's Observer.
type checkReporter struct {
	jc       *jobCtx
	run      *run
	sha      string
	last     time.Time
	stages   []string
	external string
	mu       sync.Mutex // guards pending: stages log from their workers
	pending  strings.Builder
	// ctx is the job's context, for the progress updates StageStarted makes (an observer takes none).
	ctx context.Context
}

func (c *checkReporter) name() string { return c.jc.b.cfg.Checks.Name }

func (c *checkReporter) start(ctx context.Context) error {
	jc := c.jc
	c.ctx = ctx
	c.external = externalID(c.run.ID)
	id := c.run.CheckRunID
	lookup := jc.job.Attempts > 1 // an earlier attempt may have created the check run and died before recording it
	if id == claimedCheckRun {
		// Another replica's announcer is creating it.
		var err error
		if id, err = jc.b.awaitCheckRun(ctx, c.run); err != nil {
			return err
		}
		lookup = lookup || id == 0
	}
	if id == 0 && lookup {
		found, err := jc.gh.FindCheckRun(ctx, jc.repo, c.sha, c.name(), c.external)
		if err != nil {
			return err
		}
		id = found
	}
	cr := ghclient.CheckRun{Name: c.name(), HeadSHA: c.sha, Status: "in_progress", DetailsURL: jc.b.runURL(c.run.ID),
		ExternalID: c.external, Title: "Running", Summary: fmt.Sprintf("catalogbot is checking %s (job %d, attempt %d).",
			short(c.sha), jc.job.ID, jc.job.Attempts)}
	if id != 0 {
		if err := jc.gh.UpdateCheckRun(ctx, jc.repo, id, cr); err != nil {
			return err
		}
	} else {
		var err error
		if id, err = jc.gh.CreateCheckRun(ctx, jc.repo, cr); err != nil {
			return err
		}
		jc.b.metrics.inProgress.WithLabelValues("worker").Observe(time.Since(jc.job.Created).Seconds())
	}
	c.run.CheckRunID = id
	c.last = timeNow()
	if err := jc.b.store.setCheckRun(ctx, c.run.ID, id); err != nil {
		return err
	}
	c.logf("check run %d in progress on %s", id, short(c.sha))
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
	err := c.jc.b.store.appendLog(context.WithoutCancel(ctx), c.run.ID, c.pending.String())
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
	err := c.jc.gh.UpdateCheckRun(c.ctx, c.jc.repo, c.run.CheckRunID, ghclient.CheckRun{Name: c.name(), Status: "in_progress",
		Title: "Running: " + stage, Summary: "Stages started so far: " + strings.Join(c.stages, ", ") + "."})
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

// complete posts the outcome: annotations in batches of 50 (each request repeats title and summary, as
// GitHub requires an output with them), the last batch with the conclusion; then records the run.
func (c *checkReporter) complete(ctx context.Context, rep *report.Report) error {
	jc := c.jc
	out := report.CheckRun(rep, jc.b.cfg.Checks.MaxAnnotations)
	anns := ghAnnotations(out.Annotations)
	summary, title, concl := out.Summary, out.Title, out.Conclusion
	for len(anns) > annotationsPerRequest {
		batch := anns[:annotationsPerRequest]
		anns = anns[annotationsPerRequest:]
		if err := jc.gh.UpdateCheckRun(ctx, jc.repo, c.run.CheckRunID, ghclient.CheckRun{Name: c.name(), Title: title,
			Summary: summary, Annotations: batch}); err != nil {
			return err
		}
	}
	if err := jc.gh.UpdateCheckRun(ctx, jc.repo, c.run.CheckRunID, ghclient.CheckRun{Name: c.name(), Conclusion: concl,
		DetailsURL: jc.b.runURL(c.run.ID), Title: title, Summary: summary, Annotations: anns}); err != nil {
		return err
	}
	c.run.Status, c.run.Verdict, c.run.Conclusion, c.run.Report = runCompleted, string(rep.Verdict()), concl, rep
	c.logf("completed: %s (%s)", concl, title)
	if err := c.flush(ctx); err != nil {
		return err
	}
	return jc.b.store.finishRun(ctx, c.run)
}

// deadlineTitle is the title of a check run whose job ran past queue.jobTimeout.
const deadlineTitle = "Infrastructure failure: the check ran past its deadline: not your change; comment /retest"

// cancelled closes the check run of a superseded job as cancelled (one past its deadline as failed). At shutdown it stays in progress: the
// job is requeued and the next attempt reuses it.
func (c *checkReporter) cancelled(cause error) {
	ctx, done := context.WithTimeout(context.Background(), 15*time.Second)
	defer done()
	jc := c.jc
	c.logf("%s", cancelReason(cause))
	if err := c.flush(ctx); err != nil {
		jc.log.Warn("recording the run's log failed", "err", err)
	}
	if errors.Is(cause, queue.ErrShutdown) || errors.Is(cause, queue.ErrLeaseLost) {
		return
	}
	if errors.Is(cause, queue.ErrSuperseded) {
		jc.b.announcer.waitAll(ctx)
	}
	conclusion, title, status := "cancelled", "Cancelled", runCancelled
	if errors.Is(cause, queue.ErrDeadline) {
		// Not the author's doing, but nothing may pass: a failure, as infrastructure failures are.
		conclusion, title, status = "failure", deadlineTitle, runCompleted
	}
	err := jc.gh.UpdateCheckRun(ctx, jc.repo, c.run.CheckRunID, ghclient.CheckRun{Name: c.name(), Conclusion: conclusion,
		Title: title, Summary: cancelReason(cause)})
	if err != nil {
		jc.log.Warn("closing the cancelled check run failed", "err", err)
	}
	c.run.Status, c.run.Conclusion = status, conclusion
	if err := jc.b.store.finishRun(ctx, c.run); err != nil {
		jc.log.Warn("recording the cancelled run failed", "err", err)
	}
}

// ghAnnotations converts rendered annotations to the client's type.
func ghAnnotations(in []report.Annotation) []ghclient.Annotation {
	out := make([]ghclient.Annotation, len(in))
	for i, a := range in {
		out[i] = ghclient.Annotation{Path: a.Path, StartLine: a.StartLine, EndLine: a.EndLine, Level: a.Level, Title: a.Title, Message: a.Message}
	}
	return out
}
