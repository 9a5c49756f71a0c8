package queue

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// A job past its deadline is stopped, even when its handler ignores its context: the heartbeat stops
// renewing the lease, the worker leaves the handler behind after Abandon, the job fails for good naming
// its deadline, and the only worker runs the next job.
func TestJobPastItsDeadlineIsNotKeptAlive(t *testing.T) {
	q := open(t, t.TempDir()+"/queue.db")
	stuck := make(chan struct{})
	t.Cleanup(func() { close(stuck) })
	// Abandon is shorter than what is left of the lease at the deadline (at least 2/3 of it), so the
	// worker records the failure before the lease expires.
	p := &Pool{Queue: q, Workers: 1, Lease: time.Second, Poll: 10 * time.Millisecond,
		Deadline: 300 * time.Millisecond, Abandon: 200 * time.Millisecond,
		Handler: func(ctx context.Context, j *Job) error {
			if j.Delivery == "tarpit" {
				<-stuck // deaf to ctx: a call no deadline reaches
			}
			return nil
		}}
	runPool(t, p)
	pit := enqueue(t, q, Job{Delivery: "tarpit", Repo: "o/r"})
	next := enqueue(t, q, Job{Delivery: "next", Repo: "o/r"})
	p.Wake()
	start := time.Now()
	j := waitState(t, q, pit.ID, Failed)
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("the stuck job failed after %s, want about Deadline+Abandon (500ms)", el)
	}
	if !strings.Contains(j.Error, ErrDeadline.Error()) || j.Attempts != 1 {
		t.Errorf("stuck job: %d attempts, error %q", j.Attempts, j.Error)
	}
	waitState(t, q, next.ID, Done)
}

// A job whose error is marked with RetryAt is queued again to run then, its attempt not counted, however
// many times it happens.
func TestRetryAtDefersWithoutCountingTheAttempt(t *testing.T) {
	q := open(t, t.TempDir()+"/queue.db")
	runs := 0
	p := &Pool{Queue: q, Workers: 1, MaxAttempts: 2, Poll: 10 * time.Millisecond,
		Handler: func(ctx context.Context, j *Job) error {
			runs++
			if runs <= 3 {
				return RetryAt(time.Now().Add(100*time.Millisecond), errors.New("rate limited"))
			}
			return nil
		}}
	runPool(t, p)
	id := enqueue(t, q, Job{Delivery: "d", Repo: "o/r"}).ID
	p.Wake()
	j := waitState(t, q, id, Done)
	if runs != 4 || j.Attempts != 1 {
		t.Errorf("%d runs, %d attempts counted; want 4 runs (3 deferred), 1 attempt", runs, j.Attempts)
	}
}
