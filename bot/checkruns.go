package bot

import (
	"context"
	"fmt"
	"time"

	"github.com/catalogbot/catalogbot/bot/checkrun"
	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/bot/queue"
	"github.com/catalogbot/catalogbot/bot/store"
)

// The bot's side of a check run's life: its runs handed to bot/checkrun, which decides every state a check
// run takes and writes it (checkrun.Owner; checkrun.Ending for the ends past the normal path). The
// enqueue claims the announcement, the announcer creates the check run and closes the superseded jobs'
// ones, the worker waits for the announcement, closes a stale one, and settles what its job left open;
// the running check's own updates are its reporter's (reporter.go).

// claimAnnouncement records the run of a check job being queued and claims the creation of its check
// run, in the job's enqueue transaction (tx): no worker starts the job before the claim exists.
func (b *Bot) claimAnnouncement(ctx context.Context, tx *queue.Tx, job int64, t PullRequestTask) (checkrun.Ref, int64, error) {
	run, claimed, err := b.store.ClaimRun(ctx, tx, job, kindCheck, t.Repo, t.PR, t.HeadSHA)
	if err != nil || !claimed {
		return checkrun.Ref{}, 0, err
	}
	repo, err := ghclient.ParseRepo(t.Repo)
	if err != nil {
		return checkrun.Ref{}, 0, err
	}
	ref := checkrun.Ref{Run: run, Repo: repo, HeadSHA: t.HeadSHA, DetailsURL: b.runURL(run)}
	lease, err := b.checks.Claim(ctx, tx, ref)
	return ref, lease, err
}

// announceCheckRun creates the in-progress check run of a queued check job whose run it claimed.
func (b *Bot) announceCheckRun(ctx context.Context, gh ghclient.GitHub, an announcement, log interface{ Warn(string, ...any) }) {
	created, err := b.checks.Announce(ctx, gh, an.ref, an.lease, "Queued",
		fmt.Sprintf("catalogbot queued %s as job %d; the check starts when a worker is free.", short(an.ref.HeadSHA), an.job))
	if err != nil || !created {
		if err != nil {
			log.Warn("creating the check run at once failed: the worker will create it", "err", err)
		}
		return
	}
	b.metrics.inProgress.WithLabelValues("announcer").Observe(time.Since(an.received).Seconds())
	// A newer push or the pull request's closing may have superseded the job while its check run was being
	// created: whichever of this and the superseding delivery's announcement settles first says why.
	if j, err := b.queue.Get(ctx, an.job); err == nil && j != nil && j.State == queue.Superseded {
		b.closeQueuedRuns(ctx, gh, an.ref.Repo, []int64{an.job}, checkrun.SupersededBy(j.Error))
	}
}

// closeQueuedRuns closes, with e, the announced check runs of jobs that will never run.
func (b *Bot) closeQueuedRuns(ctx context.Context, gh ghclient.GitHub, repo ghclient.Repo, jobs []int64, e checkrun.Ending) {
	runs, err := b.store.RunsOfJobs(ctx, jobs, store.RunQueued)
	if err != nil {
		b.log.Warn("find the runs of superseded jobs", "err", err)
		return
	}
	for _, r := range runs {
		b.settleRun(ctx, gh, repo, r, store.RunQueued, e)
	}
}

// settleRun completes a run that did not finish the normal way, and its check run, once: only the caller
// that moves the run out of status from closes the check run (checkrun.Owner.Settle).
func (b *Bot) settleRun(ctx context.Context, gh ghclient.GitHub, repo ghclient.Repo, r *store.Run, from string, e checkrun.Ending) {
	ok, err := b.store.MarkRun(ctx, r.ID, from, settledStatus(e), e.Conclusion, e.Summary)
	if err != nil || !ok {
		if err != nil {
			b.log.Warn("settle run", "run", r.ID, "err", err)
		}
		return
	}
	states := []checkrun.State{checkrun.Queued}
	if from == store.RunRunning {
		states = append(states, checkrun.InProgress)
	}
	ref := checkrun.Ref{Run: r.ID, Repo: repo, HeadSHA: r.HeadSHA}
	if _, err := b.checks.Settle(ctx, gh, ref, states, e.Conclusion, e.Title, e.Summary); err != nil {
		b.log.Warn("close check run", "run", r.ID, "err", err)
	}
}

// settledStatus is the status of a run whose check run ends with e.
func settledStatus(e checkrun.Ending) string {
	if e.Conclusion == "cancelled" {
		return store.RunCancelled
	}
	return store.RunCompleted
}

// awaitAnnouncement lets the creation of the check run announced for the job's pull request pr (0: none
// was), if one is in flight, finish before the job's own requests.
func (jc *jobCtx) awaitAnnouncement(ctx context.Context, pr int) error {
	if pr == 0 {
		return nil
	}
	r, err := jc.b.store.RunOf(ctx, jc.job.ID, kindCheck, pr)
	if err != nil || r == nil {
		return err
	}
	return jc.b.checks.Await(ctx, r.ID)
}

// dropStaleAnnouncement closes the check run announced for this job when the pull request's head moved
// before the check started: the new head is checked instead (in a run of its own check run).
func (jc *jobCtx) dropStaleAnnouncement(ctx context.Context, number int, head string) error {
	r, err := jc.b.store.RunOf(ctx, jc.job.ID, kindCheck, number)
	if err != nil || r == nil || r.Status != store.RunQueued || r.HeadSHA == head {
		return err
	}
	jc.b.settleRun(ctx, jc.gh, jc.repo, r, store.RunQueued, checkrun.HeadMoved(short(head)))
	return nil
}

// settleCheckJob runs after a check job's handler: a run it left open (announced but never started, or
// started and not completed because the job failed for good) is closed as checkrun.JobEnded says, so no
// check run stays in progress. A job that will run again (retry, shutdown, lost lease) keeps its runs for
// the next attempt.
func (jc *jobCtx) settleCheckJob(ctx context.Context, cause, err error) {
	_, deferred := queue.RetryTime(err) // rate limited: it runs again after the reset, attempt not counted
	final := !deferred && (queue.IsPermanent(err) || jc.job.Attempts >= jc.b.cfg.Queue.MaxAttempts)
	why := ""
	if err != nil {
		why = truncate(err.Error(), 2000)
	}
	e, ok := checkrun.JobEnded(cause, err, final, why)
	if !ok {
		return
	}
	ctx = context.WithoutCancel(ctx)
	statuses := []string{store.RunQueued}
	if e.Started {
		statuses = append(statuses, store.RunRunning)
	}
	for _, status := range statuses {
		runs, err := jc.b.store.RunsOfJobs(ctx, []int64{jc.job.ID}, status)
		if err != nil {
			jc.log.Warn("find the job's open runs", "err", err)
			return
		}
		for _, r := range runs {
			if r.Kind == kindCheck {
				jc.b.settleRun(ctx, jc.gh, jc.repo, r, status, e)
			}
		}
	}
}
