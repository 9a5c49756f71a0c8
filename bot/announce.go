package bot

import (
	"context"
	"sync"
	"time"

	"github.com/catalogbot/catalogbot/bot/checkrun"
	"github.com/catalogbot/catalogbot/bot/ghclient"
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
	target    Target
	ref       checkrun.Ref
	lease     int64
	closeJobs []int64
	reason    string
	received  time.Time
}

// announceWorkers is how many announcements are sent at once. A create waits mostly for others (GitHub's
// answer, two statements on the queue's database), so more of them in flight answer a burst's pull requests
// sooner; they also take the processor and the database from the webhook handlers and the checks (500
// deliveries over 100 pull requests, 2 cores: 16 against 8 put the first answers' p99 from 478-608 to
// 265-464 ms, the webhook answers' p99 from 70-100 to 107-111 ms on SQLite; docs/benchmarks.md). GitHub
// allows 100 concurrent requests; its secondary rate limits are ghclient's to wait out.
const (
	announceWorkers = 16
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
	log := b.log.With("delivery", an.delivery, "repo", an.target.Repo, "job", an.job)
	repo, err := ghclient.ParseRepo(an.target.Repo)
	if err == nil {
		var gh ghclient.GitHub
		if gh, err = b.gh.For(an.target.Installation); err == nil {
			if an.lease != 0 {
				b.announceCheckRun(ctx, gh, an, log)
			}
			if len(an.closeJobs) > 0 {
				b.closeQueuedRuns(ctx, gh, repo, an.closeJobs, checkrun.Cancelled(an.reason))
			}
			return
		}
	}
	log.Warn("announce", "err", err)
	if an.lease != 0 {
		_ = b.checks.Release(ctx, an.ref, an.lease)
	}
}
