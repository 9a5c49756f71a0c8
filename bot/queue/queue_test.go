package queue

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// open opens the queue database dsn (a SQLite path or a PostgreSQL URL), closed when the test ends.
func open(t *testing.T, dsn string) *Queue {
	t.Helper()
	q, err := Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

func enqueue(t *testing.T, q *Queue, j Job) Enqueued {
	t.Helper()
	if j.Kind == "" {
		j.Kind = "check"
	}
	if j.Event == "" {
		j.Event = "pull_request"
	}
	e, err := q.Enqueue(t.Context(), j)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func state(t *testing.T, q *Queue, id int64) State {
	t.Helper()
	j, err := q.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return j.State
}

func TestEnqueueDeduplicatesDeliveries(t *testing.T) {
	forEachBackend(t, testEnqueueDeduplicatesDeliveries)
}

func testEnqueueDeduplicatesDeliveries(t *testing.T, bk backend) {
	q := bk.open(t)
	a := enqueue(t, q, Job{Delivery: "d1", Repo: "o/r"})
	b := enqueue(t, q, Job{Delivery: "d1", Repo: "o/r"})
	if a.Duplicate || !b.Duplicate || a.ID != b.ID {
		t.Fatalf("first %+v, replay %+v: want the replay to be a duplicate of the first", a, b)
	}
	depth, err := q.Depth(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if depth[Queued] != 1 {
		t.Errorf("queued = %d, want 1", depth[Queued])
	}
	if _, err := q.Enqueue(t.Context(), Job{Kind: "x"}); err == nil {
		t.Error("a job without a delivery was accepted")
	}
}

func TestNewerJobSupersedesQueuedAndCancelsRunning(t *testing.T) {
	forEachBackend(t, testNewerJobSupersedesQueuedAndCancelsRunning)
}

func testNewerJobSupersedesQueuedAndCancelsRunning(t *testing.T, bk backend) {
	q := bk.open(t)
	ctx := t.Context()
	first := enqueue(t, q, Job{Delivery: "d1", Repo: "o/r", Key: "o/r#1", CancelRunning: true})
	running, err := q.Claim(ctx, time.Minute)
	if err != nil || running == nil || running.ID != first.ID {
		t.Fatalf("claim = %v, %v; want job %d", running, err, first.ID)
	}
	second := enqueue(t, q, Job{Delivery: "d2", Repo: "o/r", Key: "o/r#1", CancelRunning: true})
	third := enqueue(t, q, Job{Delivery: "d3", Repo: "o/r", Key: "o/r#1", CancelRunning: true})
	other := enqueue(t, q, Job{Delivery: "d4", Repo: "o/r", Key: "o/r#2", CancelRunning: true})
	if fmt.Sprint(second.Cancel) != fmt.Sprint([]int64{first.ID}) {
		t.Errorf("second asked %v to stop, want [%d]", second.Cancel, first.ID)
	}
	if fmt.Sprint(third.Superseded) != fmt.Sprint([]int64{second.ID}) {
		t.Errorf("third superseded %v, want [%d]", third.Superseded, second.ID)
	}
	if len(other.Superseded)+len(other.Cancel) != 0 {
		t.Errorf("a job of another pull request superseded %v and cancelled %v", other.Superseded, other.Cancel)
	}
	if cancel, err := q.Heartbeat(ctx, running, time.Minute); err != nil || !cancel {
		t.Errorf("heartbeat of the running job = %v, %v; want a stop request", cancel, err)
	}
	// While the first still runs, its pull request's next job waits; the other pull request's does not.
	next, err := q.Claim(ctx, time.Minute)
	if err != nil || next == nil || next.ID != other.ID {
		t.Fatalf("claim = %+v, %v; want job %d (another pull request)", next, err, other.ID)
	}
	if j, _ := q.Claim(ctx, time.Minute); j != nil {
		t.Fatalf("claimed job %d while job %d of the same pull request runs", j.ID, first.ID)
	}
	if err := q.Supersede(ctx, running, "test"); err != nil {
		t.Fatal(err)
	}
	next, err = q.Claim(ctx, time.Minute)
	if err != nil || next == nil || next.ID != third.ID {
		t.Fatalf("claim = %+v, %v; want job %d", next, err, third.ID)
	}
	for id, want := range map[int64]State{first.ID: Superseded, second.ID: Superseded, third.ID: Running} {
		if got := state(t, q, id); got != want {
			t.Errorf("job %d is %s, want %s", id, got, want)
		}
	}
}

func TestSerialKeyRunsOneAtATime(t *testing.T) { forEachBackend(t, testSerialKeyRunsOneAtATime) }

func testSerialKeyRunsOneAtATime(t *testing.T, bk backend) {
	q := bk.open(t)
	ctx := t.Context()
	a := enqueue(t, q, Job{Delivery: "m1", Repo: "o/r", Serial: "o/r"})
	b := enqueue(t, q, Job{Delivery: "m2", Repo: "o/r", Serial: "o/r"})
	c := enqueue(t, q, Job{Delivery: "m3", Repo: "o/s", Serial: "o/s"})
	ja, _ := q.Claim(ctx, time.Minute)
	jc, _ := q.Claim(ctx, time.Minute)
	if ja == nil || ja.ID != a.ID || jc == nil || jc.ID != c.ID {
		t.Fatalf("claimed %v and %v, want %d then %d", ja, jc, a.ID, c.ID)
	}
	if j, _ := q.Claim(ctx, time.Minute); j != nil {
		t.Fatalf("claimed job %d of o/r while job %d of o/r runs", j.ID, a.ID)
	}
	if err := q.Complete(ctx, ja); err != nil {
		t.Fatal(err)
	}
	if j, _ := q.Claim(ctx, time.Minute); j == nil || j.ID != b.ID {
		t.Fatalf("claimed %v, want job %d once job %d finished", j, b.ID, a.ID)
	}
}

func TestExpiredLeaseIsRequeuedAndTheOldClaimFenced(t *testing.T) {
	forEachBackend(t, testExpiredLeaseIsRequeuedAndTheOldClaimFenced)
}

func testExpiredLeaseIsRequeuedAndTheOldClaimFenced(t *testing.T, bk backend) {
	q := bk.open(t)
	ctx := t.Context()
	e := enqueue(t, q, Job{Delivery: "d1", Repo: "o/r"})
	old, _ := q.Claim(ctx, time.Millisecond)
	time.Sleep(5 * time.Millisecond)
	requeued, failed, err := q.RequeueExpired(ctx, 5)
	if err != nil || fmt.Sprint(requeued) != fmt.Sprint([]int64{e.ID}) || len(failed) != 0 {
		t.Fatalf("requeued %v failed %v (%v), want [%d] []", requeued, failed, err, e.ID)
	}
	fresh, _ := q.Claim(ctx, time.Minute)
	if fresh == nil || fresh.Attempts != 2 {
		t.Fatalf("reclaimed %+v, want attempt 2", fresh)
	}
	if err := q.Complete(ctx, old); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("the expired claim completed the job: %v", err)
	}
	if err := q.Complete(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	// A job whose lease keeps expiring fails after maxAttempts.
	e2 := enqueue(t, q, Job{Delivery: "d2", Repo: "o/r"})
	for range 2 {
		if j, _ := q.Claim(ctx, time.Millisecond); j == nil {
			t.Fatal("nothing to claim")
		}
		time.Sleep(5 * time.Millisecond)
		if _, _, err := q.RequeueExpired(ctx, 2); err != nil {
			t.Fatal(err)
		}
	}
	if got := state(t, q, e2.ID); got != Failed {
		t.Errorf("job expired twice with maxAttempts 2 is %s, want failed", got)
	}
}

func TestCancelKeyAndPrune(t *testing.T) { forEachBackend(t, testCancelKeyAndPrune) }

func testCancelKeyAndPrune(t *testing.T, bk backend) {
	q := bk.open(t)
	ctx := t.Context()
	a := enqueue(t, q, Job{Delivery: "d1", Repo: "o/r", Key: "o/r#1"})
	b := enqueue(t, q, Job{Delivery: "d2", Repo: "o/r", Key: "o/r#1"})
	jb, _ := q.Claim(ctx, time.Minute)
	if jb == nil || jb.ID != b.ID {
		t.Fatalf("claim = %v, want job %d (job %d is superseded)", jb, b.ID, a.ID)
	}
	if err := q.Complete(ctx, jb); err != nil {
		t.Fatal(err)
	}
	c := enqueue(t, q, Job{Delivery: "d3", Repo: "o/r", Key: "o/r#2"})
	jc, _ := q.Claim(ctx, time.Minute)
	d := enqueue(t, q, Job{Delivery: "d4", Repo: "o/r", Key: "o/r#2"})
	sup, cancel, err := q.CancelKey(ctx, "o/r#2", "closed")
	if err != nil || fmt.Sprint(sup) != fmt.Sprint([]int64{d.ID}) || fmt.Sprint(cancel) != fmt.Sprint([]int64{c.ID}) {
		t.Fatalf("CancelKey = %v %v %v, want [%d] [%d]", sup, cancel, err, d.ID, c.ID)
	}
	if err := q.Supersede(ctx, jc, "closed"); err != nil {
		t.Fatal(err)
	}
	enqueue(t, q, Job{Delivery: "d5", Repo: "o/r"})
	n, err := q.Prune(ctx, time.Now().Add(time.Hour))
	if err != nil || n != 4 { // a, b, c, d are finished; d5 is queued
		t.Fatalf("pruned %d (%v), want 4", n, err)
	}
	if _, err := q.Get(ctx, a.ID); err == nil {
		t.Error("pruned job still readable")
	}
}

func TestListAndDepth(t *testing.T) { forEachBackend(t, testListAndDepth) }

func testListAndDepth(t *testing.T, bk backend) {
	q := bk.open(t)
	for i := range 3 {
		enqueue(t, q, Job{Delivery: fmt.Sprint(i), Repo: "o/r"})
	}
	j, _ := q.Claim(t.Context(), time.Minute)
	if err := q.Fail(t.Context(), j, errors.New("boom"), false, 0); err != nil {
		t.Fatal(err)
	}
	jobs, err := q.List(t.Context(), 10, Failed)
	if err != nil || len(jobs) != 1 || jobs[0].Error != "boom" || jobs[0].Finished.IsZero() {
		t.Fatalf("failed jobs = %+v, %v", jobs, err)
	}
	all, _ := q.List(t.Context(), 10)
	if len(all) != 3 || all[0].ID < all[2].ID {
		t.Errorf("List is not newest first: %d jobs", len(all))
	}
	depth, _ := q.Depth(t.Context())
	if depth[Queued] != 2 || depth[Failed] != 1 || depth[Running] != 0 {
		t.Errorf("depth = %v", depth)
	}
	if err := q.Ping(context.Background()); err != nil {
		t.Error(err)
	}
}
