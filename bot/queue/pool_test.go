package queue

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// runPool runs p until the returned stop function is called; stop waits for Run to return.
func runPool(t *testing.T, p *Pool) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("pool: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// waitState waits until job id reaches want (or fails the test after 10s).
func waitState(t *testing.T, q *Queue, id int64, want State) *Job {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		j, err := q.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if j.State == want {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d is %s after 10s, want %s (error %q)", id, j.State, want, j.Error)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestPoolRunsEveryJobOnceWithBoundedConcurrency(t *testing.T) {
	forEachBackend(t, testPoolRunsEveryJobOnceWithBoundedConcurrency)
}

func testPoolRunsEveryJobOnceWithBoundedConcurrency(t *testing.T, bk backend) {
	q := bk.open(t)
	var mu sync.Mutex
	runs := map[string]int{}
	var cur, peak atomic.Int32
	p := &Pool{Queue: q, Workers: 3, Poll: 10 * time.Millisecond, Handler: func(ctx context.Context, j *Job) error {
		n := cur.Add(1)
		defer cur.Add(-1)
		for {
			old := peak.Load()
			if n <= old || peak.CompareAndSwap(old, n) {
				break
			}
		}
		time.Sleep(2 * time.Millisecond)
		mu.Lock()
		runs[j.Delivery]++
		mu.Unlock()
		return nil
	}}
	runPool(t, p)
	var last int64
	for i := range 60 {
		e := enqueue(t, q, Job{Delivery: fmt.Sprint(i), Repo: "o/r"})
		p.Wake()
		last = e.ID
	}
	enqueue(t, q, Job{Delivery: "0", Repo: "o/r"}) // a replay
	waitState(t, q, last, Done)
	deadline := time.Now().Add(10 * time.Second)
	for {
		depth, _ := q.Depth(context.Background())
		if depth[Done] == 60 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("depth %v after 10s", depth)
		}
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	for d, n := range runs {
		if n != 1 {
			t.Errorf("delivery %s ran %d times", d, n)
		}
	}
	if len(runs) != 60 {
		t.Errorf("%d deliveries ran, want 60", len(runs))
	}
	if peak.Load() > 3 {
		t.Errorf("%d jobs ran at once with 3 workers", peak.Load())
	}
}

func TestPoolCancelsSupersededRunningJob(t *testing.T) {
	forEachBackend(t, testPoolCancelsSupersededRunningJob)
}

func testPoolCancelsSupersededRunningJob(t *testing.T, bk backend) {
	for _, inProcess := range []bool{true, false} {
		t.Run(fmt.Sprintf("in-process=%v", inProcess), func(t *testing.T) {
			q := bk.open(t)
			started := make(chan int64, 4)
			p := &Pool{Queue: q, Workers: 2, Lease: 600 * time.Millisecond, Poll: 10 * time.Millisecond,
				Handler: func(ctx context.Context, j *Job) error {
					started <- j.ID
					if j.Delivery == "old" {
						<-ctx.Done() // a long pipeline run, interrupted
						return ctx.Err()
					}
					return nil
				}}
			runPool(t, p)
			old := enqueue(t, q, Job{Delivery: "old", Repo: "o/r", Key: "o/r#1", CancelRunning: true})
			p.Wake()
			if id := <-started; id != old.ID {
				t.Fatalf("started %d, want %d", id, old.ID)
			}
			newer := enqueue(t, q, Job{Delivery: "new", Repo: "o/r", Key: "o/r#1", CancelRunning: true})
			if inProcess {
				p.Cancel(newer.Cancel...)
			} // otherwise the heartbeat finds the request in the database, as another replica would
			p.Wake()
			waitState(t, q, old.ID, Superseded)
			waitState(t, q, newer.ID, Done)
		})
	}
}

func TestPoolRetriesThenFails(t *testing.T) { forEachBackend(t, testPoolRetriesThenFails) }

func testPoolRetriesThenFails(t *testing.T, bk backend) {
	q := bk.open(t)
	var calls sync.Map
	p := &Pool{Queue: q, Workers: 1, MaxAttempts: 3, Poll: 5 * time.Millisecond,
		Backoff: func(int) time.Duration { return time.Millisecond },
		Handler: func(ctx context.Context, j *Job) error {
			n, _ := calls.LoadOrStore(j.Delivery, new(atomic.Int32))
			c := n.(*atomic.Int32).Add(1)
			switch j.Delivery {
			case "flaky":
				if c < 3 {
					return errors.New("GitHub answered 502")
				}
				return nil
			case "permanent":
				return Permanent(errors.New("bad payload"))
			case "panics":
				panic("bug")
			}
			return errors.New("always down")
		}}
	var outcomes sync.Map
	p.Observe = func(j *Job, outcome string, _ time.Duration) {
		outcomes.Store(fmt.Sprint(j.Delivery, j.Attempts), outcome)
	}
	runPool(t, p)
	flaky := enqueue(t, q, Job{Delivery: "flaky", Repo: "o/r"})
	perm := enqueue(t, q, Job{Delivery: "permanent", Repo: "o/r"})
	down := enqueue(t, q, Job{Delivery: "down", Repo: "o/r"})
	panics := enqueue(t, q, Job{Delivery: "panics", Repo: "o/r"})
	p.Wake()
	if j := waitState(t, q, flaky.ID, Done); j.Attempts != 3 {
		t.Errorf("flaky job took %d attempts, want 3", j.Attempts)
	}
	if j := waitState(t, q, perm.ID, Failed); j.Attempts != 1 || j.Error != "bad payload" {
		t.Errorf("permanent failure: attempts %d error %q", j.Attempts, j.Error)
	}
	if j := waitState(t, q, down.ID, Failed); j.Attempts != 3 {
		t.Errorf("always failing job: %d attempts, want 3", j.Attempts)
	}
	if j := waitState(t, q, panics.ID, Failed); j.Attempts != 3 {
		t.Errorf("panicking job: %d attempts, want 3", j.Attempts)
	}
	if o, _ := outcomes.Load("flaky1"); o != OutcomeRetry {
		t.Errorf("outcome of the first flaky attempt = %v", o)
	}
}

func TestShutdownRequeuesRunningJob(t *testing.T) { forEachBackend(t, testShutdownRequeuesRunningJob) }

func testShutdownRequeuesRunningJob(t *testing.T, bk backend) {
	path := bk.fresh(t)
	q := open(t, path)
	started := make(chan struct{}, 1)
	p := &Pool{Queue: q, Workers: 1, Poll: 5 * time.Millisecond, Handler: func(ctx context.Context, j *Job) error {
		started <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	}}
	stop := runPool(t, p)
	e := enqueue(t, q, Job{Delivery: "d", Repo: "o/r"})
	p.Wake()
	<-started
	stop()
	j, err := q.Get(context.Background(), e.ID)
	if err != nil || j.State != Queued || j.Attempts != 0 {
		t.Fatalf("after shutdown the job is %+v (%v), want queued with 0 attempts", j, err)
	}
	var ran atomic.Int32
	p2 := &Pool{Queue: q, Workers: 1, Poll: 5 * time.Millisecond, Handler: func(ctx context.Context, j *Job) error { ran.Add(1); return nil }}
	runPool(t, p2)
	waitState(t, q, e.ID, Done)
	if ran.Load() != 1 {
		t.Errorf("ran %d times after restart", ran.Load())
	}
}

// Closing the database under a running job is a crash without a chance to record anything: the next
// process requeues the job once its lease expires, and it completes exactly once.
func TestCrashedJobCompletesOnceAfterRestart(t *testing.T) {
	forEachBackend(t, testCrashedJobCompletesOnceAfterRestart)
}

func testCrashedJobCompletesOnceAfterRestart(t *testing.T, bk backend) {
	path := bk.fresh(t)
	q1, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	e := enqueue(t, q1, Job{Delivery: "d", Repo: "o/r"})
	if j, _ := q1.Claim(context.Background(), 200*time.Millisecond); j == nil {
		t.Fatal("nothing claimed")
	}
	q1.Close()

	q2 := open(t, path)
	var ran atomic.Int32
	p := &Pool{Queue: q2, Workers: 2, Lease: 200 * time.Millisecond, Poll: 5 * time.Millisecond,
		Handler: func(ctx context.Context, j *Job) error { ran.Add(1); return nil }}
	runPool(t, p)
	j := waitState(t, q2, e.ID, Done)
	if ran.Load() != 1 || j.Attempts != 2 {
		t.Errorf("ran %d times, attempts %d; want once, on attempt 2", ran.Load(), j.Attempts)
	}
}

// childEnv makes the test binary act as a queue worker process on the database it names; childDirEnv is
// where the child marks the jobs it starts and finishes.
const (
	childEnv    = "CATALOGBOT_QUEUE_CHILD"
	childDirEnv = "CATALOGBOT_QUEUE_CHILD_DIR"
)

func TestKill9ChildLosesNothing(t *testing.T) {
	if dsn := os.Getenv(childEnv); dsn != "" {
		childWorker(dsn, os.Getenv(childDirEnv))
		return
	}
	forEachBackend(t, testKill9ChildLosesNothing)
}

func testKill9ChildLosesNothing(t *testing.T, bk backend) {
	dir := t.TempDir()
	path := bk.fresh(t)
	q := open(t, path)
	var ids []int64
	for i := range 5 {
		ids = append(ids, enqueue(t, q, Job{Delivery: fmt.Sprint("k", i), Repo: "o/r"}).ID)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestKill9ChildLosesNothing$")
	cmd.Env = append(os.Environ(), childEnv+"="+path, childDirEnv+"="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The child marks each job it starts in a file next to the database, then hangs in job k2.
	marker := filepath.Join(dir, "k2.started")
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the child never started job k2")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	ran := map[string]int{}
	var mu sync.Mutex
	p := &Pool{Queue: q, Workers: 2, Lease: 300 * time.Millisecond, Poll: 5 * time.Millisecond,
		Handler: func(ctx context.Context, j *Job) error { mu.Lock(); ran[j.Delivery]++; mu.Unlock(); return nil }}
	runPool(t, p)
	for _, id := range ids {
		waitState(t, q, id, Done)
	}
	mu.Lock()
	defer mu.Unlock()
	if ran["k2"] != 1 {
		t.Errorf("job k2 ran %d times after the restart, want 1", ran["k2"])
	}
	for d, n := range ran {
		if d != "k2" {
			done, _ := os.ReadFile(filepath.Join(dir, d+".done"))
			if len(done) > 0 {
				t.Errorf("job %s completed in the killed child and ran again %d times", d, n)
			}
		}
	}
}

// childWorker runs jobs k0, k1 to completion, then hangs in k2 until killed.
func childWorker(dsn, dir string) {
	q, err := Open(context.Background(), dsn)
	if err != nil {
		os.Exit(3)
	}
	p := &Pool{Queue: q, Workers: 1, Lease: 300 * time.Millisecond, Poll: 5 * time.Millisecond,
		Handler: func(ctx context.Context, j *Job) error {
			_ = os.WriteFile(filepath.Join(dir, j.Delivery+".started"), nil, 0o644)
			if j.Delivery == "k2" {
				select {} // killed here
			}
			_ = os.WriteFile(filepath.Join(dir, j.Delivery+".done"), []byte("done"), 0o644)
			return nil
		}}
	_ = p.Run(context.Background())
}

// An idle worker passes the pool's gate before it claims a job: while the gate holds, a queued job stays
// queued.
func TestPoolGateHoldsClaims(t *testing.T) {
	q := backends[0].open(t) // the gate is the pool's, whatever the engine
	gate := make(chan struct{})
	var passed atomic.Int32
	p := &Pool{Queue: q, Workers: 2, Poll: 10 * time.Millisecond, Handler: func(context.Context, *Job) error { return nil },
		Gate: func(ctx context.Context) {
			select {
			case <-gate:
			case <-ctx.Done():
			}
			passed.Add(1)
		}}
	runPool(t, p)
	e := enqueue(t, q, Job{Delivery: "held", Repo: "o/r"})
	p.Wake()
	for range 20 { // the workers poll meanwhile: nothing passes the gate
		time.Sleep(5 * time.Millisecond)
		if j, err := q.Get(context.Background(), e.ID); err != nil || j.State != Queued {
			t.Fatalf("job %v %v while the gate holds", j, err)
		}
	}
	close(gate)
	waitState(t, q, e.ID, Done)
	if passed.Load() == 0 {
		t.Error("the job ran without its worker passing the gate")
	}
}
