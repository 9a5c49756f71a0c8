package queue

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/internal/pgtest"
)

// span is when a handler ran.
type span struct {
	job        int64
	start, end time.Time
}

// ledger records what the handlers of every replica did.
type ledger struct {
	mu        sync.Mutex
	calls     map[int64]int
	completed map[int64]bool
	replica   map[string]int
	bySerial  map[string][]span
	byKey     map[string][]span
}

func newLedger() *ledger {
	return &ledger{calls: map[int64]int{}, completed: map[int64]bool{}, replica: map[string]int{},
		bySerial: map[string][]span{}, byKey: map[string][]span{}}
}

// handler is a replica's job: a few milliseconds of work that stops when asked.
func (l *ledger) handler(replica string) Handler {
	return func(ctx context.Context, j *Job) error {
		start := time.Now()
		l.mu.Lock()
		l.calls[j.ID]++
		l.replica[replica]++
		l.mu.Unlock()
		var err error
		select {
		case <-ctx.Done():
			err = ctx.Err()
		case <-time.After(time.Duration(1+j.ID%4) * time.Millisecond):
		}
		s := span{j.ID, start, time.Now()}
		l.mu.Lock()
		defer l.mu.Unlock()
		if j.Serial != "" {
			l.bySerial[j.Serial] = append(l.bySerial[j.Serial], s)
		}
		if j.Key != "" {
			l.byKey[j.Key] = append(l.byKey[j.Key], s)
		}
		l.completed[j.ID] = err == nil
		return err
	}
}

// overlaps reports two spans of one key that overlap in time.
func overlaps(spans map[string][]span) []string {
	var out []string
	for key, ss := range spans {
		sort.Slice(ss, func(i, j int) bool { return ss[i].start.Before(ss[j].start) })
		for i := 1; i < len(ss); i++ {
			if ss[i].start.Before(ss[i-1].end) {
				out = append(out, fmt.Sprintf("%s: job %d started before job %d ended", key, ss[i].job, ss[i-1].job))
			}
		}
	}
	return out
}

// waitDrained waits until q holds want jobs and none is queued or running.
func waitDrained(t *testing.T, q *Queue, want int) map[State]int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		depth, err := q.Depth(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		total := 0
		for _, n := range depth {
			total += n
		}
		if total == want && depth[Queued]+depth[Running] == 0 {
			return depth
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30s: %v, want %d jobs, none pending", depth, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Two replicas (two Queues, two Pools, separate connection pools) on one PostgreSQL database execute 300
// enqueues: 240 deliveries, 60 of them delivered to both replicas at once, with supersede keys (some
// stopping running jobs) and serial keys. Every delivery is one job; every job ran at most once and is
// done unless a newer job of its key superseded it; the newest job of each key is done; no two jobs of
// one serial key or one supersede key ever ran at the same time, whichever replica ran them.
func TestTwoReplicasShareOnePostgresQueue(t *testing.T) {
	dsn := pgtest.Start(t)
	queues := []*Queue{open(t, dsn), open(t, dsn)}
	l := newLedger()
	pools := []*Pool{
		{Queue: queues[0], Workers: 4, Lease: 5 * time.Second, Poll: 20 * time.Millisecond, Handler: l.handler("a")},
		{Queue: queues[1], Workers: 4, Lease: 5 * time.Second, Poll: 20 * time.Millisecond, Handler: l.handler("b")},
	}
	for _, p := range pools {
		runPool(t, p)
	}
	const distinct = 240
	jobOf := func(i int) Job {
		j := Job{Delivery: fmt.Sprintf("delivery-%d", i), Repo: "o/r", Kind: "check", Event: "pull_request"}
		if i%3 == 0 || i%5 == 0 {
			j.Serial = fmt.Sprintf("o/r%d", i%4)
		}
		if i%3 == 1 || i%5 == 0 {
			j.Key = fmt.Sprintf("o/r#%d", i%7)
			j.CancelRunning = i%2 == 0
		}
		return j
	}
	type result struct {
		delivery string
		e        Enqueued
	}
	results := make(chan result, 2*distinct)
	var wg sync.WaitGroup
	send := func(replica, i int) {
		e, err := queues[replica].Enqueue(context.Background(), jobOf(i))
		if err != nil {
			t.Error(err)
			return
		}
		pools[replica].Cancel(e.Cancel...) // as the bot does: only this replica's running jobs
		pools[replica].Wake()
		results <- result{jobOf(i).Delivery, e}
	}
	for g := range 6 {
		wg.Go(func() {
			for i := g; i < distinct; i += 6 {
				if i%4 == 0 { // the same delivery reaches both replicas at once
					var pair sync.WaitGroup
					pair.Go(func() { send(0, i) })
					pair.Go(func() { send(1, i) })
					pair.Wait()
					continue
				}
				send(i%2, i)
			}
		})
	}
	wg.Wait()
	close(results)
	ids := map[string]int64{}
	enqueues := 0
	for r := range results {
		enqueues++
		if id, ok := ids[r.delivery]; ok && id != r.e.ID {
			t.Errorf("delivery %s became jobs %d and %d", r.delivery, id, r.e.ID)
		}
		ids[r.delivery] = r.e.ID
	}
	if enqueues != 300 || len(ids) != distinct {
		t.Fatalf("%d enqueues of %d deliveries, want 300 of %d", enqueues, len(ids), distinct)
	}
	depth := waitDrained(t, queues[0], distinct)

	jobs, err := queues[1].List(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	newest := map[string]int64{}
	for _, j := range jobs {
		if j.Key != "" && j.ID > newest[j.Key] {
			newest[j.Key] = j.ID
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, j := range jobs {
		calls := l.calls[j.ID]
		switch {
		case calls > 1 || j.Attempts > 1:
			t.Errorf("job %d ran %d times (%d attempts)", j.ID, calls, j.Attempts)
		case j.State == Done && (calls != 1 || !l.completed[j.ID]):
			t.Errorf("job %d is done but its handler ran %d times (completed %v)", j.ID, calls, l.completed[j.ID])
		case j.State == Superseded && (j.Key == "" || j.ID == newest[j.Key]):
			t.Errorf("job %d (key %q) was superseded without a newer job of its key", j.ID, j.Key)
		case j.State != Done && j.State != Superseded:
			t.Errorf("job %d ended %s: %s", j.ID, j.State, j.Error)
		}
	}
	for _, o := range append(overlaps(l.bySerial), overlaps(l.byKey)...) {
		t.Error(o)
	}
	if l.replica["a"] == 0 || l.replica["b"] == 0 {
		t.Errorf("jobs per replica %v: want both to work", l.replica)
	}
	t.Logf("jobs %v; executions per replica %v", depth, l.replica)
}

// A job running on one replica is superseded through the other: the enqueueing replica cannot cancel it
// in process, so the running replica learns it from its heartbeat and stops the job.
func TestSupersededJobOnOtherReplicaStopsThroughHeartbeat(t *testing.T) {
	dsn := pgtest.Start(t)
	queues := []*Queue{open(t, dsn), open(t, dsn)}
	started := make(chan int, 2)
	outcomes := make(chan string, 8)
	var pools []*Pool
	for r, q := range queues {
		p := &Pool{Queue: q, Workers: 2, Lease: 600 * time.Millisecond, Poll: 10 * time.Millisecond,
			Handler: func(ctx context.Context, j *Job) error {
				if j.Delivery == "old" {
					started <- r
					<-ctx.Done()
					return ctx.Err()
				}
				return nil
			},
			Observe: func(j *Job, outcome string, _ time.Duration) {
				if j.Delivery == "old" {
					outcomes <- outcome
				}
			}}
		pools = append(pools, p)
		runPool(t, p)
	}
	old := enqueue(t, queues[0], Job{Delivery: "old", Repo: "o/r", Key: "o/r#1", CancelRunning: true})
	pools[0].Wake()
	pools[1].Wake()
	runner := <-started
	other := 1 - runner
	newer := enqueue(t, queues[other], Job{Delivery: "new", Repo: "o/r", Key: "o/r#1", CancelRunning: true})
	if fmt.Sprint(newer.Cancel) != fmt.Sprint([]int64{old.ID}) {
		t.Fatalf("the newer job asked %v to stop, want [%d]", newer.Cancel, old.ID)
	}
	pools[other].Cancel(newer.Cancel...) // not running there: no effect
	pools[other].Wake()
	waitState(t, queues[other], old.ID, Superseded)
	waitState(t, queues[other], newer.ID, Done)
	if o := <-outcomes; o != OutcomeSuperseded {
		t.Errorf("the running replica recorded %q, want %q", o, OutcomeSuperseded)
	}
}

// Claims on PostgreSQL are serialized by one advisory lock, across every process: while another session
// holds it, a claim waits (and then takes the job).
func TestPostgresClaimsTakeTheClaimLock(t *testing.T) {
	dsn := pgtest.Start(t)
	q := open(t, dsn)
	other := open(t, dsn)
	e := enqueue(t, q, Job{Delivery: "d", Repo: "o/r", Serial: "o/r"})
	ctx := t.Context()
	conn, err := other.db.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", claimLock); err != nil {
		t.Fatal(err)
	}
	claimed := make(chan *Job, 1)
	go func() {
		j, err := q.Claim(context.Background(), time.Minute)
		if err != nil {
			t.Error(err)
		}
		claimed <- j
	}()
	select {
	case j := <-claimed:
		t.Fatalf("claimed %+v while another session held the claim lock", j)
	case <-time.After(200 * time.Millisecond):
	}
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_unlock($1)", claimLock); err != nil {
		t.Fatal(err)
	}
	if j := <-claimed; j == nil || j.ID != e.ID {
		t.Fatalf("after the lock was released: claimed %+v, want job %d", j, e.ID)
	}
}

// A claim waiting for the claim lock holds its transaction's connection; the claims of one process take
// turns before taking one, so however many workers wait (another replica holds the lock through a slow
// claim), they hold one connection and the rest of the pool stays free for webhooks and the announcer.
// A claim waiting its turn stops with its context.
func TestPostgresWaitingClaimsHoldOneConnection(t *testing.T) {
	dsn := pgtest.Start(t)
	q := open(t, dsn)
	other := open(t, dsn)
	for i := range 8 {
		enqueue(t, q, Job{Delivery: fmt.Sprintf("d%d", i), Repo: "o/r"})
	}
	ctx := t.Context()
	conn, err := other.db.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", claimLock); err != nil {
		t.Fatal(err)
	}
	claimed := make(chan *Job, 8)
	for range 8 {
		go func() {
			j, err := q.Claim(context.Background(), time.Minute)
			if err != nil {
				t.Error(err)
			}
			claimed <- j
		}()
	}
	cancelled, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() {
		_, err := q.Claim(cancelled, time.Minute)
		gaveUp <- err
	}()
	time.Sleep(300 * time.Millisecond)
	if inUse := q.db.db.Stats().InUse; inUse > 1 {
		t.Errorf("9 claims waiting for the claim lock hold %d connections, want 1", inUse)
	}
	cancel()
	select {
	case err := <-gaveUp:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("a cancelled claim waiting its turn returned %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("a cancelled claim waiting its turn did not return")
	}
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_unlock($1)", claimLock); err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for range 8 {
		j := <-claimed
		if j == nil || seen[j.ID] {
			t.Fatalf("after the lock was released: claimed %+v (seen %v)", j, seen)
		}
		seen[j.ID] = true
	}
}

// With PostgreSQL, a replica learns of another's new jobs and stop requests by LISTEN/NOTIFY: a pool
// that would poll and heartbeat only once an hour takes a job queued through another connection, and
// stops it when a newer job through that connection supersedes it, both well inside the test's 10 s.
func TestPostgresReplicasAreNotified(t *testing.T) {
	dsn := pgtest.Start(t)
	mine, theirs := open(t, dsn), open(t, dsn)
	started := make(chan int64, 4)
	outcomes := make(chan string, 4)
	p := &Pool{Queue: mine, Workers: 2, Lease: time.Hour, Poll: time.Hour,
		Handler: func(ctx context.Context, j *Job) error {
			started <- j.ID
			if j.Delivery == "old" {
				<-ctx.Done()
				return ctx.Err()
			}
			return nil
		},
		Observe: func(j *Job, outcome string, _ time.Duration) { outcomes <- outcome }}
	runPool(t, p)
	// The pool's first poll happens at start: give it a moment to go idle for an hour.
	waitFor := func(what string, ch <-chan int64) int64 {
		t.Helper()
		select {
		case id := <-ch:
			return id
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: nothing after 10s", what)
			return 0
		}
	}
	time.Sleep(200 * time.Millisecond)
	old := enqueue(t, theirs, Job{Delivery: "old", Repo: "o/r", Key: "o/r#1", CancelRunning: true})
	if id := waitFor("the job queued elsewhere to start", started); id != old.ID {
		t.Fatalf("started job %d, want %d", id, old.ID)
	}
	newer := enqueue(t, theirs, Job{Delivery: "new", Repo: "o/r", Key: "o/r#1", CancelRunning: true})
	waitState(t, mine, old.ID, Superseded)
	if o := <-outcomes; o != OutcomeSuperseded {
		t.Errorf("the running job ended %q, want %q", o, OutcomeSuperseded)
	}
	if id := waitFor("the newer job to start", started); id != newer.ID {
		t.Fatalf("started job %d, want %d", id, newer.ID)
	}
	waitState(t, mine, newer.ID, Done)
}
