package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/catalogbot/catalogbot/bot/checkrun"
	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/bot/queue"
	"github.com/catalogbot/catalogbot/bot/store"
)

// The announcer creates a pull request head's check run, in progress, as soon as its check job is queued:
// the author sees the check start within a second however long the queue is. The worker that later runs
// the job updates that check run instead of creating one. It also closes the check runs of queued jobs a
// newer push superseded (or a closed pull request cancelled): no check run stays in progress forever.
//
// Creates go first: closing a superseded job's check run waits while any create is pending, so a burst
// of pushes does not put the first answer of one pull request behind the clean-up of others. A create
// whose job a newer delivery superseded before the create was sent is replaced, in its place in line, by
// the newer job's: the newer head is announced as early as the older one would have been, and a check run
// nobody will run is never created (its run is settled by the close, which finds no check run to close).
//
// An announcement is best effort: when it fails or the backlog is full, the worker creates the check run
// as it always could. Who creates is decided in the store (checkrun.Owner.Claim, at enqueue time): a
// worker that starts the run while the announcer creates its check run waits for that create.
type announcer struct {
	b *Bot
	// ready holds one token per pending announcement (a create or a close).
	ready chan struct{}

	mu      sync.Mutex
	creates []*announcement         // pending creates, oldest first
	closes  []announcement          // pending closes, oldest first
	pending map[int64]*announcement // the pending creates by job
	// creating counts the creates pending or being sent; idle is closed when it falls to 0.
	creating int
	idle     chan struct{}
}

// announcement is one queued delivery's work: create the check run of the claimed run (ref, lease; lease 0:
// none) or close the queued runs of closeJobs.
type announcement struct {
	delivery  string
	job       int64
	task      Task
	ref       checkrun.Ref
	lease     int64
	closeJobs []int64
	reason    string
	received  time.Time
}

const (
	announceWorkers = 8
	announceBacklog = 4096
)

func newAnnouncer(b *Bot) *announcer {
	idle := make(chan struct{})
	close(idle)
	return &announcer{b: b, ready: make(chan struct{}, announceBacklog), pending: map[int64]*announcement{}, idle: idle}
}

// firstAnswersWait bounds how long an idle worker waits for the pending creates before it takes a job
// (workersWait): in a burst, creates keep coming, and the checks must start all the same.
const firstAnswersWait = time.Second

// workersWait is the queue's gate (queue.Pool.Gate): an idle worker waits, up to firstAnswersWait, until
// no create is pending or being sent. A check's pipeline, its GitHub requests and its database writes
// compete with the announcements for the same processor, connections and API; the first answers to
// deliveries go out first.
func (a *announcer) workersWait(ctx context.Context) {
	a.mu.Lock()
	idle := a.idle
	a.mu.Unlock()
	t := time.NewTimer(firstAnswersWait)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	case <-ctx.Done():
	}
}

// created counts a create pending (+1) or done (-1). Called with a.mu held.
func (a *announcer) created(delta int) {
	if a.creating == 0 && delta > 0 {
		a.idle = make(chan struct{})
	}
	a.creating += delta
	if a.creating == 0 {
		close(a.idle)
	}
}

// send hands an announcement to the announcer's workers: its create (when it claimed one) and its closes
// separately. A pending create of a job this one superseded is replaced by this one's. With the backlog
// full the announcement is dropped (its claim released: the worker creates the check run).
func (a *announcer) send(an announcement) {
	create, closing := an, an
	create.closeJobs, closing.lease = nil, 0
	a.mu.Lock()
	queued := 0
	if an.lease != 0 && !a.replace(create, an.closeJobs) {
		if len(a.creates)+len(a.closes) >= announceBacklog {
			a.mu.Unlock()
			a.drop(an)
			return
		}
		p := &create
		a.creates = append(a.creates, p)
		a.pending[create.job] = p
		a.created(1)
		queued++
	}
	if len(an.closeJobs) > 0 {
		if len(a.creates)+len(a.closes) >= announceBacklog {
			// The create (if any) is queued; only the closes are lost, as any dropped announcement's.
			a.b.log.Warn("announcement backlog full: superseded check runs are not closed", "delivery", an.delivery, "jobs", an.closeJobs)
		} else {
			a.closes = append(a.closes, closing)
			queued++
		}
	}
	a.mu.Unlock()
	for range queued {
		a.ready <- struct{}{} // never blocks: at most announceBacklog announcements are pending
	}
}

// replace puts create in the place of the pending create of a job it superseded (superseded); false when
// there was none. Should there be several, the others are emptied. Called with a.mu held.
func (a *announcer) replace(create announcement, superseded []int64) bool {
	replaced := false
	for _, j := range superseded {
		p := a.pending[j]
		if p == nil {
			continue
		}
		delete(a.pending, j)
		if replaced {
			*p = announcement{} // nothing to do: its token is still counted
			continue
		}
		*p = create
		a.pending[create.job] = p
		replaced = true
	}
	return replaced
}

// drop gives up an announcement the backlog has no room for.
func (a *announcer) drop(an announcement) {
	a.b.log.Warn("announcement backlog full: the worker will create the check run", "delivery", an.delivery, "job", an.job)
	if an.lease != 0 {
		if err := a.b.checks.Release(context.Background(), an.ref, an.lease); err != nil {
			a.b.log.Warn("release the announcement's claim", "err", err)
		}
	}
}

// next takes the announcement to do now: the oldest pending create (create is then true), else the
// oldest pending close.
func (a *announcer) next() (an announcement, create bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.creates) > 0 {
		p := a.creates[0]
		a.creates[0] = nil
		a.creates = a.creates[1:]
		if a.pending[p.job] == p {
			delete(a.pending, p.job)
		}
		return *p, true
	}
	if len(a.closes) > 0 {
		an := a.closes[0]
		a.closes[0] = announcement{}
		a.closes = a.closes[1:]
		return an, false
	}
	return announcement{}, false
}

// finish ends an announcement next returned (a create when create is true).
func (a *announcer) finish(create bool) {
	if create {
		a.mu.Lock()
		a.created(-1)
		a.mu.Unlock()
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
				case <-a.ready:
					an, create := a.next()
					if an.lease != 0 || len(an.closeJobs) > 0 {
						a.announce(ctx, an)
					}
					a.finish(create)
				}
			}
		}()
	}
}

func (a *announcer) announce(ctx context.Context, an announcement) {
	b := a.b
	log := b.log.With("delivery", an.delivery, "repo", an.task.Repo, "job", an.job)
	repo, err := ghclient.ParseRepo(an.task.Repo)
	if err == nil {
		var gh ghclient.GitHub
		if gh, err = b.gh.For(an.task.Installation); err == nil {
			if an.lease != 0 {
				b.announceCheckRun(ctx, gh, an, log)
			}
			if len(an.closeJobs) > 0 {
				b.closeQueuedRuns(ctx, gh, repo, an.closeJobs, an.reason)
			}
			return
		}
	}
	log.Warn("announce", "err", err)
	if an.lease != 0 {
		_ = b.checks.Release(ctx, an.ref, an.lease)
	}
}

// announceCheckRun creates the in-progress check run of a queued check job whose run it claimed.
func (b *Bot) announceCheckRun(ctx context.Context, gh ghclient.GitHub, an announcement, log interface{ Warn(string, ...any) }) {
	created, err := b.checks.Announce(ctx, gh, an.ref, an.lease, "Queued",
		fmt.Sprintf("catalogbot queued %s as job %d; the check starts when a worker is free.", short(an.task.HeadSHA), an.job))
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
		b.closeQueuedRuns(ctx, gh, an.ref.Repo, []int64{an.job}, supersededReason(j.Error))
	}
}

// closedCancel is the queue's record of jobs cancelled because their pull request was closed.
const closedCancel = "pull request closed"

// supersededReason is the check run's summary for a queued job the queue superseded, from the reason the
// queue recorded (closedCancel, or "superseded by job N").
func supersededReason(recorded string) string {
	switch {
	case recorded == closedCancel:
		return "The pull request was closed."
	case strings.HasPrefix(recorded, "superseded by job "):
		return "Superseded by job " + strings.TrimPrefix(recorded, "superseded by job ") + "."
	}
	return "Superseded before the check started."
}

// claimAnnouncement records the run of a check job being queued and claims the creation of its check
// run, in the job's enqueue transaction (tx): no worker starts the job before the claim exists.
func (b *Bot) claimAnnouncement(ctx context.Context, tx *queue.Tx, job int64, t Task) (checkrun.Ref, int64, error) {
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

// closeQueuedRuns completes, as cancelled, the announced check runs of jobs that will never run.
func (b *Bot) closeQueuedRuns(ctx context.Context, gh ghclient.GitHub, repo ghclient.Repo, jobs []int64, reason string) {
	runs, err := b.store.RunsOfJobs(ctx, jobs, store.RunQueued)
	if err != nil {
		b.log.Warn("find the runs of superseded jobs", "err", err)
		return
	}
	for _, r := range runs {
		b.settleRun(ctx, gh, repo, r, store.RunQueued, "cancelled", "Cancelled", reason)
	}
}

// settleRun completes a run that did not finish the normal way, and its check run, once: only the caller
// that moves the run out of status from closes the check run (checkrun.Owner.Settle).
func (b *Bot) settleRun(ctx context.Context, gh ghclient.GitHub, repo ghclient.Repo, r *store.Run, from, conclusion, title, summary string) {
	status := store.RunCancelled
	if conclusion != "cancelled" {
		status = store.RunCompleted
	}
	ok, err := b.store.MarkRun(ctx, r.ID, from, status, conclusion, summary)
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
	if _, err := b.checks.Settle(ctx, gh, ref, states, conclusion, title, summary); err != nil {
		b.log.Warn("close check run", "run", r.ID, "err", err)
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
		jc.settleRuns(ctx, []string{store.RunQueued}, "cancelled", "Cancelled", cancelReason(cause))
	case errors.Is(cause, queue.ErrDeadline):
		jc.settleRuns(ctx, []string{store.RunQueued, store.RunRunning}, "failure", deadlineTitle, cancelReason(cause))
	case err == nil:
		jc.settleRuns(ctx, []string{store.RunQueued}, "skipped", "Not checked",
			"The pull request was closed, merged, turned into a draft or pushed again before the check started.")
	case final:
		jc.settleRuns(ctx, []string{store.RunQueued, store.RunRunning}, "failure", "catalogbot could not check this commit",
			"The check failed for a reason that is not about this pull request's content: "+truncate(err.Error(), 2000)+
				"\n\nComment `/retest` to run it again.")
	}
}

func (jc *jobCtx) settleRuns(ctx context.Context, statuses []string, conclusion, title, summary string) {
	for _, status := range statuses {
		runs, err := jc.b.store.RunsOfJobs(ctx, []int64{jc.job.ID}, status)
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
