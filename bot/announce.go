package bot

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/bot/queue"
)

// The announcer creates a pull request head's check run, in progress, as soon as its check job is queued:
// the author sees the check start within a second however long the queue is. The worker that later runs
// the job updates that check run instead of creating one. It also closes the check runs of queued jobs a
// newer push superseded (or a closed pull request cancelled): no check run stays in progress forever.
//
// An announcement is best effort: when it fails or the backlog is full, the worker creates the check run
// as it always could. Within one process the worker waits for a pending announcement of its delivery (so
// the requests happen in one order); across replicas the run row's check_run_id is the claim: -1 while
// an announcer creates the check run, then its ID.
type announcer struct {
	b  *Bot
	ch chan announcement

	mu      sync.Mutex
	pending map[string]chan struct{} // by delivery
}

// announcement is one queued delivery's work: create the check run of job (0: none) and close the queued
// runs of closeJobs.
type announcement struct {
	delivery  string
	done      chan struct{}
	job       int64
	task      Task
	closeJobs []int64
	reason    string
	received  time.Time
}

const (
	announceWorkers = 8
	announceBacklog = 4096
	// announceWait bounds how long a worker waits for an announcement of its job (in this process, or,
	// through the run row, in another replica).
	announceWait = 15 * time.Second
	// claimedCheckRun marks a run whose check run an announcer is creating.
	claimedCheckRun = -1
)

func newAnnouncer(b *Bot) *announcer {
	return &announcer{b: b, ch: make(chan announcement, announceBacklog), pending: map[string]chan struct{}{}}
}

// begin registers a delivery whose job is about to be queued, before it can be claimed.
func (a *announcer) begin(delivery string) chan struct{} {
	done := make(chan struct{})
	a.mu.Lock()
	a.pending[delivery] = done
	a.mu.Unlock()
	return done
}

// finish marks an announcement done (or abandoned).
func (a *announcer) finish(delivery string, done chan struct{}) {
	if done == nil {
		return
	}
	a.mu.Lock()
	if a.pending[delivery] == done {
		delete(a.pending, delivery)
	}
	a.mu.Unlock()
	close(done)
}

// send hands an announcement to the announcer's workers; with the backlog full it is dropped.
func (a *announcer) send(an announcement) {
	select {
	case a.ch <- an:
	default:
		a.b.log.Warn("announcement backlog full: the worker will create the check run", "delivery", an.delivery, "job", an.job)
		a.finish(an.delivery, an.done)
	}
}

// wait blocks until the announcement of delivery, if one is pending in this process, is done.
func (a *announcer) wait(ctx context.Context, delivery string) {
	a.mu.Lock()
	done := a.pending[delivery]
	a.mu.Unlock()
	if done == nil {
		return
	}
	t := time.NewTimer(announceWait)
	defer t.Stop()
	select {
	case <-done:
	case <-ctx.Done():
	case <-t.C:
	}
}

// waitAll blocks until every announcement pending now is done (a superseded check closes its check run
// after its successor's appeared).
func (a *announcer) waitAll(ctx context.Context) {
	a.mu.Lock()
	var pending []chan struct{}
	for _, done := range a.pending {
		pending = append(pending, done)
	}
	a.mu.Unlock()
	t := time.NewTimer(announceWait)
	defer t.Stop()
	for _, done := range pending {
		select {
		case <-done:
		case <-ctx.Done():
			return
		case <-t.C:
			return
		}
	}
}

// run starts the announcer's workers; they stop with ctx.
func (a *announcer) run(ctx context.Context) {
	for range announceWorkers {
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case an := <-a.ch:
					a.announce(ctx, an)
					a.finish(an.delivery, an.done)
				}
			}
		}()
	}
}

func (a *announcer) announce(ctx context.Context, an announcement) {
	b := a.b
	log := b.log.With("delivery", an.delivery, "repo", an.task.Repo, "job", an.job)
	repo, err := ghclient.ParseRepo(an.task.Repo)
	if err != nil {
		log.Warn("announce", "err", err)
		return
	}
	gh, err := b.gh.For(an.task.Installation)
	if err != nil {
		log.Warn("announce", "err", err)
		return
	}
	if an.job != 0 {
		if err := b.announceCheckRun(ctx, gh, repo, an); err != nil {
			log.Warn("creating the check run at once failed: the worker will create it", "err", err)
		}
	}
	if len(an.closeJobs) > 0 {
		b.closeQueuedRuns(ctx, gh, repo, an.closeJobs, an.reason)
	}
}

// announceCheckRun creates the in-progress check run of a queued check job, unless its worker (here or in
// another replica) got to the run first.
func (b *Bot) announceCheckRun(ctx context.Context, gh ghclient.GitHub, repo ghclient.Repo, an announcement) error {
	t := an.task
	r, claimed, err := b.store.claimRun(ctx, an.job, kindCheck, t.Repo, t.PR, t.HeadSHA)
	if err != nil || !claimed {
		return err
	}
	id, err := gh.CreateCheckRun(ctx, repo, ghclient.CheckRun{Name: b.cfg.Checks.Name, HeadSHA: t.HeadSHA, Status: "in_progress",
		DetailsURL: b.runURL(r.ID), ExternalID: externalID(r.ID), Title: "Queued",
		Summary: fmt.Sprintf("catalogbot queued %s as job %d; the check starts when a worker is free.", short(t.HeadSHA), an.job)})
	if err != nil {
		// Hand the run back: the worker creates the check run.
		if _, rerr := b.store.setCheckRunFrom(context.WithoutCancel(ctx), r.ID, claimedCheckRun, 0); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return err
	}
	if _, err := b.store.setCheckRunFrom(context.WithoutCancel(ctx), r.ID, claimedCheckRun, id); err != nil {
		return err
	}
	b.metrics.inProgress.WithLabelValues("announcer").Observe(time.Since(an.received).Seconds())
	// A newer push may have superseded the job while its check run was being created.
	if j, err := b.queue.Get(ctx, an.job); err == nil && j != nil && j.State == queue.Superseded {
		b.closeQueuedRuns(ctx, gh, repo, []int64{an.job}, "Superseded by a newer push before the check started.")
	}
	return nil
}

// closeQueuedRuns completes, as cancelled, the announced check runs of jobs that will never run.
func (b *Bot) closeQueuedRuns(ctx context.Context, gh ghclient.GitHub, repo ghclient.Repo, jobs []int64, reason string) {
	runs, err := b.store.runsOfJobs(ctx, jobs, runQueued)
	if err != nil {
		b.log.Warn("find the runs of superseded jobs", "err", err)
		return
	}
	for _, r := range runs {
		b.settleRun(ctx, gh, repo, r, runQueued, "cancelled", "Cancelled", reason)
	}
}

// settleRun completes a run that did not finish the normal way, and its check run, once: only the caller
// that moves the run out of status from closes the check run.
func (b *Bot) settleRun(ctx context.Context, gh ghclient.GitHub, repo ghclient.Repo, r *run, from, conclusion, title, summary string) {
	status := runCancelled
	if conclusion != "cancelled" {
		status = runCompleted
	}
	ok, err := b.store.markRun(ctx, r.ID, from, status, conclusion, summary)
	if err != nil || !ok {
		if err != nil {
			b.log.Warn("settle run", "run", r.ID, "err", err)
		}
		return
	}
	if r.CheckRunID == claimedCheckRun {
		// An announcer is creating the check run: close it once it exists.
		id, err := b.awaitCheckRun(ctx, r)
		if err != nil {
			b.log.Warn("settle run: wait for its check run", "run", r.ID, "err", err)
			return
		}
		r.CheckRunID = id
	}
	if r.CheckRunID <= 0 {
		return
	}
	if err := gh.UpdateCheckRun(ctx, repo, r.CheckRunID, ghclient.CheckRun{Name: b.cfg.Checks.Name, Conclusion: conclusion,
		Title: title, Summary: summary}); err != nil {
		b.log.Warn("close check run", "run", r.ID, "check_run", r.CheckRunID, "err", err)
	}
}

// settleCheckJob runs after a check job's handler: a run it left open (announced but never started, or
// started and not completed because the job failed for good) is closed, so no check run stays in progress.
// A job that will run again (retry, shutdown, lost lease) keeps its runs for the next attempt.
func (jc *jobCtx) settleCheckJob(ctx context.Context, cause, err error) {
	b := jc.b
	_, deferred := queue.RetryTime(err) // rate limited: it runs again after the reset, attempt not counted
	final := !deferred && (queue.IsPermanent(err) || jc.job.Attempts >= b.cfg.Queue.MaxAttempts)
	ctx = context.WithoutCancel(ctx)
	switch {
	case errors.Is(cause, queue.ErrShutdown) || errors.Is(cause, queue.ErrLeaseLost):
		return
	case errors.Is(cause, queue.ErrSuperseded):
		jc.settleRuns(ctx, []string{runQueued}, "cancelled", "Cancelled", cancelReason(cause))
	case errors.Is(cause, queue.ErrDeadline):
		jc.settleRuns(ctx, []string{runQueued, runRunning}, "failure", deadlineTitle, cancelReason(cause))
	case err == nil:
		jc.settleRuns(ctx, []string{runQueued}, "skipped", "Not checked",
			"The pull request was closed, merged, turned into a draft or pushed again before the check started.")
	case final:
		jc.settleRuns(ctx, []string{runQueued, runRunning}, "failure", "catalogbot could not check this commit",
			"The check failed for a reason that is not about this pull request's content: "+truncate(err.Error(), 2000)+
				"\n\nComment `/retest` to run it again.")
	}
}

func (jc *jobCtx) settleRuns(ctx context.Context, statuses []string, conclusion, title, summary string) {
	for _, status := range statuses {
		runs, err := jc.b.store.runsOfJobs(ctx, []int64{jc.job.ID}, status)
		if err != nil {
			jc.log.Warn("find the job's open runs", "err", err)
			return
		}
		for _, r := range runs {
			if r.Kind == kindCheck {
				jc.b.settleRun(ctx, jc.gh, jc.repo, r, status, conclusion, title, summary)
			}
		}
	}
}

// awaitCheckRun returns the check run of a run whose announcement another process is making (its
// check_run_id is claimedCheckRun): the ID once recorded, or 0 when the announcer gave up or did not
// answer in time (the caller looks the check run up by its external ID, then creates one).
func (b *Bot) awaitCheckRun(ctx context.Context, r *run) (int64, error) {
	deadline := time.Now().Add(announceWait)
	for {
		cur, err := b.store.getRun(ctx, r.ID)
		if err != nil {
			return 0, err
		}
		if cur == nil || cur.CheckRunID != claimedCheckRun {
			if cur == nil {
				return 0, nil
			}
			return cur.CheckRunID, nil
		}
		if time.Now().After(deadline) {
			return 0, nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func externalID(runID int64) string { return fmt.Sprintf("catalogbot-run-%d", runID) }
