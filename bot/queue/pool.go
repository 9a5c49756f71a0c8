package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Handler runs one job. Its context is cancelled when a newer job supersedes it, when the lease is lost,
// or at shutdown after the grace period; the pool records the right state in each case.
type Handler func(ctx context.Context, j *Job) error

type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// Permanent marks an error that retrying cannot fix: the job fails at once.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanent{err}
}

// IsPermanent reports whether err was marked with Permanent.
func IsPermanent(err error) bool {
	var p permanent
	return errors.As(err, &p)
}

type deferred struct {
	err   error
	until time.Time
}

func (d deferred) Error() string { return d.err.Error() }
func (d deferred) Unwrap() error { return d.err }

// RetryAt marks an error that goes away at a known time (a rate limit's reset): the job is queued again
// to run then, and the attempt is not counted.
func RetryAt(until time.Time, err error) error {
	if err == nil {
		return nil
	}
	return deferred{err: err, until: until}
}

// RetryTime reports the time an error marked with RetryAt goes away.
func RetryTime(err error) (time.Time, bool) {
	var d deferred
	if errors.As(err, &d) {
		return d.until, true
	}
	return time.Time{}, false
}

// Causes of a job context's cancellation.
var (
	ErrSuperseded = errors.New("superseded by a newer job")
	ErrShutdown   = errors.New("the bot is shutting down")
	ErrDeadline   = errors.New("the job ran past its deadline")
)

// Outcome of one job execution, as reported to Pool.Observe.
const (
	OutcomeDone       = "done"
	OutcomeRetry      = "retry"
	OutcomeDeferred   = "deferred"
	OutcomeFailed     = "failed"
	OutcomeSuperseded = "superseded"
	OutcomeReleased   = "released"
	OutcomeLost       = "lease_lost"
)

// Pool runs jobs from a Queue with a bounded number of workers.
type Pool struct {
	Queue   *Queue
	Handler Handler
	// OnEvent, when set, receives the events other processes Notify that are not the queue's own.
	OnEvent func(event string)
	// Workers bounds concurrent jobs (default 4).
	Workers int
	// Lease is how long a claim lasts without renewal (default 1m); it is renewed every Lease/3.
	Lease time.Duration
	// Grace is how long shutdown waits for running jobs before cancelling and requeueing them (default 0:
	// requeue at once).
	Grace time.Duration
	// MaxAttempts bounds attempts per job (default 5).
	MaxAttempts int
	// Backoff is the delay before retry number attempt (default 2^attempt seconds, at most 5 minutes).
	Backoff func(attempt int) time.Duration
	// Poll is how often idle workers look for due jobs without being woken (default 1s).
	Poll   time.Duration
	Logger *slog.Logger
	// Observe, when set, is called after every execution with its outcome and duration.
	Observe func(j *Job, outcome string, d time.Duration)
	// Gate, when set, is called before each claim: an idle worker waits in it before taking a job (the
	// bot lets its first answers to deliveries out first). It must return in bounded time.
	Gate func(ctx context.Context)
	// Deadline bounds one execution (0: none). At the deadline the job's context is cancelled with
	// ErrDeadline and its heartbeat stops renewing the lease; a handler that has not returned Abandon
	// after its context was cancelled (default 30s; only with a Deadline) is left behind, the job fails
	// for good and its worker takes the next job. Abandon should be shorter than 2/3 of Lease: the lease
	// then outlives the wait (otherwise the reaper requeues the job first, as a job whose worker died).
	Deadline time.Duration
	Abandon  time.Duration

	once sync.Once
	wake chan struct{}
	mu   sync.Mutex
	// running are the executions in progress. A job ID can stand in two of them (its lease expired while a
	// slow handler still ran, and the job was claimed again): keying by ID lost one, which then never
	// heard of shutdown and held Run for ever.
	running map[*execution]bool
	active  atomic.Bool
}

func (p *Pool) init() {
	p.once.Do(func() {
		if p.Workers <= 0 {
			p.Workers = 4
		}
		if p.Lease <= 0 {
			p.Lease = time.Minute
		}
		if p.MaxAttempts <= 0 {
			p.MaxAttempts = 5
		}
		if p.Backoff == nil {
			p.Backoff = func(attempt int) time.Duration {
				return min(time.Duration(1<<min(attempt, 9))*time.Second, 5*time.Minute)
			}
		}
		if p.Poll <= 0 {
			p.Poll = time.Second
		}
		if p.Abandon <= 0 {
			p.Abandon = 30 * time.Second
		}
		if p.Logger == nil {
			p.Logger = slog.New(slog.DiscardHandler)
		}
		p.wake = make(chan struct{}, 1)
		p.running = map[*execution]bool{}
	})
}

// Wake tells an idle worker that a job was enqueued.
func (p *Pool) Wake() {
	p.init()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Cancel asks running jobs to stop because newer jobs superseded them.
func (p *Pool) Cancel(ids ...int64) {
	p.init()
	p.mu.Lock()
	defer p.mu.Unlock()
	for e := range p.running {
		if slices.Contains(ids, e.id) {
			e.cancel(ErrSuperseded)
		}
	}
}

// pokeHeartbeats makes every running job's heartbeat beat now: one of them may have been asked to stop.
func (p *Pool) pokeHeartbeats() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for e := range p.running {
		select {
		case e.poke <- struct{}{}:
		default:
		}
	}
}

// Active reports whether Run is running and not shutting down.
func (p *Pool) Active() bool { return p.active.Load() }

// Running returns the IDs of the jobs this pool is executing.
func (p *Pool) Running() []int64 {
	p.init()
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]int64, 0, len(p.running))
	for e := range p.running {
		if !slices.Contains(out, e.id) {
			out = append(out, e.id)
		}
	}
	return out
}

// Run executes jobs until ctx is done, then stops claiming, waits up to Grace for running jobs, cancels
// the rest and puts them back in the queue. Jobs whose lease expired (a previous process was killed) are
// requeued at start and periodically.
func (p *Pool) Run(ctx context.Context) error {
	p.init()
	if _, _, err := p.reap(ctx); err != nil {
		if ctx.Err() != nil {
			return nil // stopped before it started
		}
		return err
	}
	p.active.Store(true)
	defer p.active.Store(false)
	jobCtx := context.WithoutCancel(ctx) // jobs outlive ctx by the grace period
	var wg sync.WaitGroup
	for range p.Workers {
		wg.Go(func() { p.worker(ctx, jobCtx) })
	}
	wg.Go(func() { p.reaper(ctx) })
	// Other processes sharing the queue (PostgreSQL) notify new jobs and stop requests.
	wg.Go(func() {
		p.Queue.Listen(ctx, func(event string) {
			switch event {
			case EventJob:
				p.Wake()
			case EventCancel:
				p.pokeHeartbeats()
			default:
				if p.OnEvent != nil {
					p.OnEvent(event)
				}
			}
		}, func(err error) { p.Logger.Warn("queue events: polling until reconnected", "err", err) })
	})
	<-ctx.Done()
	p.active.Store(false)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	if p.Grace > 0 {
		select {
		case <-done:
			return nil
		case <-time.After(p.Grace):
		}
	}
	p.mu.Lock()
	for e := range p.running {
		e.cancel(ErrShutdown)
	}
	p.mu.Unlock()
	<-done
	return nil
}

func (p *Pool) reap(ctx context.Context) (requeued, failed []int64, err error) {
	requeued, failed, err = p.Queue.RequeueExpired(ctx, p.MaxAttempts)
	if err != nil {
		return nil, nil, err
	}
	if len(requeued) > 0 || len(failed) > 0 {
		p.Logger.Warn("jobs whose worker died", "requeued", requeued, "failed", failed)
	}
	return requeued, failed, nil
}

func (p *Pool) reaper(ctx context.Context) {
	t := time.NewTicker(p.Lease / 2)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			requeued, _, err := p.reap(ctx)
			if err != nil && ctx.Err() == nil {
				p.Logger.Error("requeue expired jobs", "err", err)
			}
			if len(requeued) > 0 {
				p.Wake()
			}
		}
	}
}

func (p *Pool) worker(ctx, jobCtx context.Context) {
	for ctx.Err() == nil {
		if p.Gate != nil {
			p.Gate(ctx)
		}
		j, err := p.Queue.Claim(ctx, p.Lease)
		if err != nil {
			if ctx.Err() == nil {
				p.Logger.Error("claim a job", "err", err)
			}
			p.idle(ctx)
			continue
		}
		if j == nil {
			p.idle(ctx)
			continue
		}
		// Another job may be claimable too: pass the wake-up on.
		p.Wake()
		p.execute(jobCtx, j)
	}
}

func (p *Pool) idle(ctx context.Context) {
	wait := p.Poll
	if next, err := p.Queue.NextDue(ctx); err == nil && !next.IsZero() {
		wait = min(wait, max(time.Until(next), time.Millisecond))
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-p.wake:
	case <-t.C:
	}
}

// execution is one run of a job's handler.
type execution struct {
	id     int64
	cancel context.CancelCauseFunc
	poke   chan struct{} // its heartbeat beats now when poked
}

func (p *Pool) execute(base context.Context, j *Job) {
	start := time.Now()
	ctx, cancel := context.WithCancelCause(base)
	defer cancel(nil)
	if p.Deadline > 0 {
		t := time.AfterFunc(p.Deadline, func() { cancel(ErrDeadline) })
		defer t.Stop()
	}
	poke := make(chan struct{}, 1)
	p.mu.Lock()
	e := &execution{id: j.ID, cancel: cancel, poke: poke}
	p.running[e] = true
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.running, e)
		p.mu.Unlock()
	}()
	log := p.Logger.With("job", j.ID, "kind", j.Kind, "repo", j.Repo, "attempt", j.Attempts)
	stopBeat := p.heartbeat(ctx, j, cancel, poke, log)
	err := p.callBounded(ctx, j, log)
	stopBeat()

	// Record the outcome even though ctx may be cancelled.
	rec, done := context.WithTimeout(context.WithoutCancel(base), 10*time.Second)
	defer done()
	outcome := OutcomeDone
	var ferr error
	cause := context.Cause(ctx)
	switch {
	case err == nil:
		ferr = p.Queue.Complete(rec, j)
	case errors.Is(cause, ErrLeaseLost):
		outcome = OutcomeLost
	case errors.Is(cause, ErrDeadline):
		outcome = OutcomeFailed
		ferr = p.Queue.Fail(rec, j, fmt.Errorf("%w (%s): %v", ErrDeadline, p.Deadline, err), false, 0)
	case errors.Is(cause, ErrSuperseded):
		outcome = OutcomeSuperseded
		ferr = p.Queue.Supersede(rec, j, ErrSuperseded.Error())
	case errors.Is(cause, ErrShutdown):
		outcome = OutcomeReleased
		ferr = p.Queue.Release(rec, j)
	case isDeferred(err):
		outcome = OutcomeDeferred
		until, _ := RetryTime(err)
		ferr = p.Queue.Defer(rec, j, err, until)
	case IsPermanent(err) || j.Attempts >= p.MaxAttempts:
		outcome = OutcomeFailed
		ferr = p.Queue.Fail(rec, j, err, false, 0)
	default:
		outcome = OutcomeRetry
		ferr = p.Queue.Fail(rec, j, err, true, p.Backoff(j.Attempts))
	}
	if errors.Is(ferr, ErrLeaseLost) {
		outcome = OutcomeLost
	} else if ferr != nil {
		log.Error("record the job's outcome", "err", ferr)
	}
	if err != nil {
		log.Warn("job ended with an error", "outcome", outcome, "err", err)
	} else {
		log.Info("job done", "duration", time.Since(start).Round(time.Millisecond))
	}
	if outcome == OutcomeRetry || outcome == OutcomeDeferred {
		p.Wake()
	}
	if p.Observe != nil {
		p.Observe(j, outcome, time.Since(start))
	}
}

// callBounded runs the handler; with a Deadline, once ctx is cancelled it waits at most Abandon for it to
// return, then leaves it behind (a handler stuck where no context reaches must not hold a worker for ever).
func (p *Pool) callBounded(ctx context.Context, j *Job, log *slog.Logger) error {
	if p.Deadline <= 0 {
		return p.call(ctx, j)
	}
	done := make(chan error, 1)
	go func() { done <- p.call(ctx, j) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	t := time.NewTimer(p.Abandon)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		log.Error("the job did not stop when asked: abandoned", "cause", context.Cause(ctx), "waited", p.Abandon)
		return fmt.Errorf("job %d did not stop within %s of being asked (%v): abandoned", j.ID, p.Abandon, context.Cause(ctx))
	}
}

// call runs the handler, turning a panic into an error.
func (p *Pool) call(ctx context.Context, j *Job) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("job %d panicked: %v\n%s", j.ID, r, debug.Stack())
		}
	}()
	return p.Handler(ctx, j)
}

// heartbeat renews the lease every Lease/3 (and when poked) and cancels the job when a newer job asked it to stop or the
// lease was lost. It returns a function that stops it.
func (p *Pool) heartbeat(ctx context.Context, j *Job, cancel context.CancelCauseFunc, poke <-chan struct{}, log *slog.Logger) func() {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(max(p.Lease/3, 10*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return // past its deadline (or stopped): the lease is no longer renewed
			case <-t.C:
			case <-poke:
			}
			stopRequested, err := p.Queue.Heartbeat(ctx, j, p.Lease)
			switch {
			case errors.Is(err, ErrLeaseLost):
				log.Warn("lease lost: stopping the job")
				cancel(ErrLeaseLost)
				return
			case err != nil:
				log.Error("renew lease", "err", err)
			case stopRequested:
				cancel(ErrSuperseded)
				return
			}
		}
	})
	return func() { close(stop); wg.Wait() }
}

func isDeferred(err error) bool {
	_, ok := RetryTime(err)
	return ok
}
