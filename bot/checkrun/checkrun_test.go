package checkrun

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/bot/checkrun/internal/checksapi"
	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/report"
)

func outcome(annotations int) Output {
	out := Output{Title: "All stages passed", Summary: "summary", Conclusion: "success"}
	for i := range annotations {
		out.Annotations = append(out.Annotations, report.Annotation{Path: "catalog/a.json", StartLine: i + 1, EndLine: i + 1, Level: "notice", Title: "validate", Message: "m"})
	}
	return out
}

func wantState(t *testing.T, o *Owner, run int64, want State) {
	t.Helper()
	got, _, err := o.StateOf(t.Context(), run)
	if err != nil || got != want {
		t.Fatalf("state %q (%v), want %q", got, err, want)
	}
}

// The usual life: announced at enqueue (one create, queued), started by a worker (an update, no second
// create), progress, completed with 120 annotations in three requests of at most 50.
func TestAnnouncedStartedCompleted(t *testing.T) {
	forEachBackend(t, func(t *testing.T, o *Owner, _ func() *Owner) {
		ctx := t.Context()
		gh := &fakeGitHub{}
		lease, err := o.Claim(ctx, nil, ref(1, 0))
		if err != nil || lease == 0 {
			t.Fatalf("claim: %d %v", lease, err)
		}
		if again, err := o.Claim(ctx, nil, ref(1, 0)); err != nil || again != 0 {
			t.Fatalf("a second claim of the same run: %d %v", again, err)
		}
		if _, err := o.Announce(ctx, gh, ref(1, 0), lease, "Queued", "queued"); err != nil {
			t.Fatal(err)
		}
		wantState(t, o, 1, Queued)
		id, created, err := o.Start(ctx, gh, ref(1, 1), "Running", "running")
		if err != nil || created || id != 1 {
			t.Fatalf("start: id %d created %v err %v", id, created, err)
		}
		wantState(t, o, 1, InProgress)
		if err := o.Progress(ctx, gh, ref(1, 1), "Running: render", "stages"); err != nil {
			t.Fatal(err)
		}
		if err := o.Complete(ctx, gh, ref(1, 1), outcome(120)); err != nil {
			t.Fatal(err)
		}
		wantState(t, o, 1, Completed)
		cr := gh.only(t)
		if cr.status != "completed" || cr.conclusion != "success" || cr.annotations != 120 || cr.external != "catalogbot-run-1" {
			t.Errorf("check run %+v", cr)
		}
		if n := gh.count("update"); n != 1+1+3 {
			t.Errorf("%d updates, want 5 (start, progress, three batches): %v", n, gh.requests)
		}
		// Done is done: neither a late progress update, nor a second completion, nor a settle writes.
		before := len(gh.requests)
		if err := o.Progress(ctx, gh, ref(1, 1), "Running: smoke", "late"); !IsNotOwner(err) {
			t.Errorf("progress after completion: %v", err)
		}
		if err := o.Complete(ctx, gh, ref(1, 1), outcome(0)); !IsNotOwner(err) {
			t.Errorf("a second completion: %v", err)
		}
		if ok, err := o.Settle(ctx, gh, ref(1, 0), []State{Queued, InProgress}, "failure", "x", "y"); ok || err != nil {
			t.Errorf("settling a completed run: %v %v", ok, err)
		}
		if len(gh.requests) != before {
			t.Errorf("requests after completion: %v", gh.requests[before:])
		}
	})
}

// Two workers (replicas) settle the same queued run at once: one moves it and closes the check run, the
// other writes nothing.
func TestTwoSettlersOneWrite(t *testing.T) {
	forEachBackend(t, func(t *testing.T, o *Owner, newOwner func() *Owner) {
		ctx := t.Context()
		gh := &fakeGitHub{}
		lease, _ := o.Claim(ctx, nil, ref(1, 0))
		if _, err := o.Announce(ctx, gh, ref(1, 0), lease, "Queued", "queued"); err != nil {
			t.Fatal(err)
		}
		owners := []*Owner{o, newOwner()}
		var wg sync.WaitGroup
		won := make([]bool, 2)
		for i, ow := range owners {
			wg.Go(func() {
				ok, err := ow.Settle(context.Background(), gh, ref(1, 0), []State{Queued}, "cancelled", "Cancelled", "superseded")
				if err != nil {
					t.Error(err)
				}
				won[i] = ok
			})
		}
		wg.Wait()
		if won[0] == won[1] {
			t.Fatalf("settlers that moved the run: %v, want exactly one", won)
		}
		if n := gh.count("update"); n != 1 {
			t.Errorf("%d updates, want 1: %v", n, gh.requests)
		}
		if cr := gh.only(t); cr.conclusion != "cancelled" {
			t.Errorf("check run %+v", cr)
		}
		wantState(t, o, 1, Superseded)
	})
}

// A stale worker (its lease ran out, the job was claimed again) cannot take back, update or complete the
// run its successor holds; a worker whose check was superseded by a newer push cannot complete it.
func TestStaleAttemptsWriteNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, o *Owner, newOwner func() *Owner) {
		ctx := t.Context()
		gh := &fakeGitHub{}
		if _, _, err := o.Start(ctx, gh, ref(1, 1), "Running", "attempt 1"); err != nil {
			t.Fatal(err)
		}
		other := newOwner() // the successor runs in another replica
		if _, created, err := other.Start(ctx, gh, ref(1, 2), "Running", "attempt 2"); err != nil || created {
			t.Fatalf("attempt 2 start: created %v, %v", created, err)
		}
		before := len(gh.requests)
		if _, _, err := o.Start(ctx, gh, ref(1, 1), "Running", "attempt 1 again"); !IsNotOwner(err) {
			t.Errorf("the stale attempt took the run back: %v", err)
		}
		if err := o.Progress(ctx, gh, ref(1, 1), "Running: render", "stale"); !IsNotOwner(err) {
			t.Errorf("stale progress: %v", err)
		}
		if err := o.Complete(ctx, gh, ref(1, 1), Output{Title: "Failed", Conclusion: "failure"}); !IsNotOwner(err) {
			t.Errorf("stale completion: %v", err)
		}
		if len(gh.requests) != before {
			t.Fatalf("the stale attempt wrote: %v", gh.requests[before:])
		}
		if err := other.Complete(ctx, gh, ref(1, 2), outcome(0)); err != nil {
			t.Fatal(err)
		}
		if cr := gh.only(t); cr.conclusion != "success" {
			t.Errorf("check run %+v", cr)
		}

		// Superseded by a newer push while running: the settle wins, the worker's completion is refused.
		if _, _, err := o.Start(ctx, gh, ref(2, 1), "Running", "run 2"); err != nil {
			t.Fatal(err)
		}
		if ok, err := other.Settle(ctx, gh, ref(2, 0), []State{Queued, InProgress}, "cancelled", "Cancelled", "newer push"); !ok || err != nil {
			t.Fatalf("settle: %v %v", ok, err)
		}
		if err := o.Complete(ctx, gh, ref(2, 1), outcome(0)); !IsNotOwner(err) {
			t.Errorf("completing a superseded run: %v", err)
		}
		if err := o.Progress(ctx, gh, ref(2, 1), "Running: smoke", "late"); !IsNotOwner(err) {
			t.Errorf("progress on a superseded run: %v", err)
		}
		gh.mu.Lock()
		cr := *gh.runs[1]
		gh.mu.Unlock()
		if cr.conclusion != "cancelled" {
			t.Errorf("superseded check run %+v", cr)
		}
		wantState(t, o, 2, Superseded)
	})
}

// A create that reached GitHub but was never recorded (the answer was lost, or the process died before
// storing it) is found again by its external ID: the next attempt updates it, never creates a second one.
func TestCreateFoundAgainByExternalID(t *testing.T) {
	forEachBackend(t, func(t *testing.T, o *Owner, newOwner func() *Owner) {
		ctx := t.Context()
		gh := &fakeGitHub{fail: func(op string, n int) (error, bool) {
			if op == "create" && n == 1 {
				return errServer, true // created, but the answer is a 502
			}
			return nil, false
		}}
		if _, _, err := o.Start(ctx, gh, ref(1, 1), "Running", "attempt 1"); !errors.Is(err, errServer) {
			t.Fatalf("start with a lost answer: %v", err)
		}
		restarted := newOwner() // the job's next attempt, after a restart
		id, created, err := restarted.Start(ctx, gh, ref(1, 2), "Running", "attempt 2")
		if err != nil || created || id != 1 {
			t.Fatalf("attempt 2: id %d created %v err %v", id, created, err)
		}
		if gh.count("find") != 1 || gh.count("create") != 1 {
			t.Errorf("requests %v, want one create and one lookup", gh.requests)
		}
		if err := restarted.Complete(ctx, gh, ref(1, 2), outcome(0)); err != nil {
			t.Fatal(err)
		}
		if cr := gh.only(t); cr.conclusion != "success" {
			t.Errorf("check run %+v", cr)
		}

		// Never sent (a 502 before GitHub created anything): looked up, not found, created once.
		gh2 := &fakeGitHub{fail: func(op string, n int) (error, bool) {
			if op == "create" && n == 1 {
				return errRateLimited, false
			}
			return nil, false
		}}
		if _, _, err := o.Start(ctx, gh2, ref(2, 1), "Running", "x"); !errors.Is(err, errRateLimited) {
			t.Fatalf("start rate limited: %v", err)
		}
		if _, created, err := o.Start(ctx, gh2, ref(2, 2), "Running", "y"); err != nil || !created {
			t.Fatalf("retry: created %v, %v", created, err)
		}
		gh2.only(t)
		if gh2.count("find") != 1 {
			t.Errorf("requests %v", gh2.requests)
		}
		// A run that never sent a create is created without a lookup.
		gh3 := &fakeGitHub{}
		if _, created, err := o.Start(ctx, gh3, ref(3, 1), "Running", "z"); err != nil || !created || gh3.count("find") != 0 {
			t.Errorf("fresh start: created %v, %v, requests %v", created, err, gh3.requests)
		}
	})
}

// An announcer that claimed a run and died before creating its check run holds the create only until its
// lease runs out: the worker then creates it (once); it never waits for ever.
func TestDeadAnnouncerLeaseRunsOut(t *testing.T) {
	forEachBackend(t, func(t *testing.T, o *Owner, _ func() *Owner) {
		o.createLease = 300 * time.Millisecond
		ctx := t.Context()
		gh := &fakeGitHub{}
		if lease, err := o.Claim(ctx, nil, ref(1, 0)); err != nil || lease == 0 {
			t.Fatalf("claim: %v", err)
		}
		// (the announcer dies here)
		if _, created, err := o.Start(ctx, gh, ref(1, 1), "Running", "worker"); err != nil || !created {
			t.Fatalf("start after the lease: created %v, %v", created, err)
		}
		if cr := gh.only(t); cr.title != "Running" {
			t.Errorf("check run %+v", cr)
		}
		// An announcement dropped (backlog full) releases its claim: the worker creates at once instead of
		// waiting out a lease of an hour (the test's deadline would end it).
		o.createLease = time.Hour
		lease, err := o.Claim(ctx, nil, ref(2, 0))
		if err != nil || lease == 0 {
			t.Fatalf("claim: %v", err)
		}
		if err := o.Release(ctx, ref(2, 0), lease); err != nil {
			t.Fatal(err)
		}
		if created, err := o.Announce(ctx, gh, ref(2, 0), lease, "Queued", "late"); err != nil || created {
			t.Fatalf("an announcement after its release created: %v %v", created, err)
		}
		if _, created, err := o.Start(ctx, gh, ref(2, 1), "Running", "worker"); err != nil || !created {
			t.Fatalf("start after a release: created %v, %v", created, err)
		}
	})
}

// A worker starting while the announcer creates the check run waits for that create and updates it; a
// settle during the create is applied once the check run exists. Races are forced by a create that
// blocks until the other party has acted.
func TestRacesWithACreateInFlight(t *testing.T) {
	forEachBackend(t, func(t *testing.T, o *Owner, _ func() *Owner) {
		ctx := t.Context()
		for _, settle := range []bool{false, true} {
			run := int64(1)
			if settle {
				run = 2
			}
			release := make(chan struct{})
			entered := make(chan struct{})
			gh := &blockingCreate{fakeGitHub: &fakeGitHub{}, entered: entered, release: release}
			lease, _ := o.Claim(ctx, nil, ref(run, 0))
			announced := make(chan error, 1)
			go func() {
				_, err := o.Announce(context.Background(), gh, ref(run, 0), lease, "Queued", "queued")
				announced <- err
			}()
			<-entered
			acted := make(chan error, 1)
			if settle {
				go func() {
					_, err := o.Settle(context.Background(), gh, ref(run, 0), []State{Queued}, "cancelled", "Cancelled", "closed")
					acted <- err
				}()
			} else {
				go func() {
					_, _, err := o.Start(context.Background(), gh, ref(run, 1), "Running", "worker")
					acted <- err
				}()
			}
			if settle {
				if err := <-acted; err != nil { // the settle returns at once: the creator closes the check run
					t.Fatal(err)
				}
				close(release)
			} else {
				waitUntil(t, func() bool { s, _, _ := o.StateOf(ctx, run); return s == InProgress })
				close(release)
				if err := <-acted; err != nil {
					t.Fatal(err)
				}
			}
			if err := <-announced; err != nil {
				t.Fatal(err)
			}
			cr := gh.only(t)
			if settle && cr.conclusion != "cancelled" || !settle && (cr.status != "in_progress" || cr.title != "Running") {
				t.Errorf("settle %v: check run %+v (requests %v)", settle, cr, gh.requests)
			}
		}
	})
}

// blockingCreate holds its first create until release is closed.
type blockingCreate struct {
	*fakeGitHub
	entered, release chan struct{}
	once             sync.Once
}

func (b *blockingCreate) CreateCheckRun(ctx context.Context, repo ghclient.Repo, cr checksapi.CheckRun) (int64, error) {
	b.once.Do(func() {
		close(b.entered)
		<-b.release
	})
	return b.fakeGitHub.CreateCheckRun(ctx, repo, cr)
}

// waitUntil waits for cond, which another goroutine makes true (no timing is asserted: the test's own
// deadline bounds it).
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-t.Context().Done():
			t.Fatal("gave up waiting")
		case <-time.After(time.Millisecond):
		}
	}
}

// 5xx and 429 answers to updates leave the run where it was: a completion that failed leaves it in
// progress for the next attempt, which completes it.
func TestFailedUpdatesLeaveTheRunInProgress(t *testing.T) {
	forEachBackend(t, func(t *testing.T, o *Owner, _ func() *Owner) {
		ctx := t.Context()
		fails := map[int]error{2: errServer, 3: errRateLimited} // start's update succeeds; two completions fail
		gh := &fakeGitHub{fail: func(op string, n int) (error, bool) {
			if op == "update" {
				return fails[n], false
			}
			return nil, false
		}}
		lease, _ := o.Claim(ctx, nil, ref(1, 0))
		if _, err := o.Announce(ctx, gh, ref(1, 0), lease, "Queued", "q"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := o.Start(ctx, gh, ref(1, 1), "Running", "r"); err != nil {
			t.Fatal(err)
		}
		if err := o.Complete(ctx, gh, ref(1, 1), outcome(0)); !errors.Is(err, errServer) {
			t.Fatalf("complete with a 502: %v", err)
		}
		wantState(t, o, 1, InProgress)
		if _, _, err := o.Start(ctx, gh, ref(1, 2), "Running", "retry"); !errors.Is(err, errRateLimited) {
			t.Fatalf("start with a 429: %v", err)
		}
		if err := o.Complete(ctx, gh, ref(1, 2), outcome(0)); err != nil {
			t.Fatal(err)
		}
		wantState(t, o, 1, Completed)
		if cr := gh.only(t); cr.conclusion != "success" {
			t.Errorf("check run %+v", cr)
		}
	})
}

// A worker in another process waiting for the announcer's create goes on when the announcer broadcasts
// its end, not when the create's lease (an hour here: the test's deadline would end it) runs out.
func TestCreateEndIsBroadcastToOtherProcesses(t *testing.T) {
	forEachBackend(t, func(t *testing.T, announcer *Owner, newOwner func() *Owner) {
		ctx := t.Context()
		worker := newOwner()
		announcer.createLease, worker.createLease = time.Hour, time.Hour
		announcer.Broadcast = func(context.Context) error { worker.Wake(); return nil }
		release, entered := make(chan struct{}), make(chan struct{})
		gh := &blockingCreate{fakeGitHub: &fakeGitHub{}, entered: entered, release: release}
		lease, err := announcer.Claim(ctx, nil, ref(1, 0))
		if err != nil || lease == 0 {
			t.Fatalf("claim: %v", err)
		}
		announced := make(chan error, 1)
		go func() {
			_, err := announcer.Announce(context.Background(), gh, ref(1, 0), lease, "Queued", "q")
			announced <- err
		}()
		<-entered
		started := make(chan error, 1)
		go func() {
			_, created, err := worker.Start(context.Background(), gh, ref(1, 1), "Running", "r")
			if err == nil && created {
				err = errors.New("the worker created a second check run")
			}
			started <- err
		}()
		waitUntil(t, func() bool { s, _, _ := worker.StateOf(ctx, 1); return s == InProgress })
		close(release)
		if err := <-announced; err != nil {
			t.Fatal(err)
		}
		if err := <-started; err != nil {
			t.Fatal(err)
		}
		if cr := gh.only(t); cr.title != "Running" {
			t.Errorf("check run %+v", cr)
		}
	})
}

// The owner reaches the Checks API only through a client ghclient made (checksapi.Of): a GitHub of another
// making is refused before the run moves.
func TestOtherGitHubsAreRefused(t *testing.T) {
	forEachBackend(t, func(t *testing.T, o *Owner, _ func() *Owner) {
		ctx := t.Context()
		o.checks = checksapi.Of
		gh := &fakeGitHub{}
		if _, _, err := o.Start(ctx, gh, ref(1, 1), "Running", "r"); err == nil {
			t.Fatal("started with a fake GitHub")
		}
		if ok, err := o.Settle(ctx, gh, ref(1, 0), []State{Queued, InProgress}, "cancelled", "Cancelled", "x"); ok || err == nil {
			t.Errorf("settled with a fake GitHub: %v, %v", ok, err)
		}
		if s, _, err := o.StateOf(ctx, 1); s != "" || err != nil || len(gh.requests) != 0 {
			t.Errorf("state %q, %v; requests %v", s, err, gh.requests)
		}
	})
}

// An announcer whose create waits (the client sleeping through a rate limit) past its create lease never
// sends it: the worker that takes over after the lease creates the one check run, and the announcer's
// request, released afterwards, is cut at its lease instead of making a second one.
func TestCreateIsCutAtItsLease(t *testing.T) {
	forEachBackend(t, func(t *testing.T, o *Owner, _ func() *Owner) {
		o.createLease = 400 * time.Millisecond
		ctx := t.Context()
		release := make(chan struct{})
		entered := make(chan struct{})
		gh := &waitingCreate{fakeGitHub: &fakeGitHub{}, entered: entered, release: release}
		lease, err := o.Claim(ctx, nil, ref(1, 0))
		if err != nil || lease == 0 {
			t.Fatalf("claim: %v", err)
		}
		announced := make(chan error, 1)
		go func() {
			_, err := o.Announce(context.Background(), gh, ref(1, 0), lease, "Queued", "queued")
			announced <- err
		}()
		<-entered
		if _, created, err := o.Start(ctx, gh, ref(1, 1), "Running", "worker"); err != nil || !created {
			t.Fatalf("start after the lease: created %v, %v", created, err)
		}
		close(release)
		if err := <-announced; !errors.Is(err, errLeaseCut) {
			t.Errorf("the announcer's create: %v, want it cut at its lease", err)
		}
		if cr := gh.only(t); cr.title != "Running" {
			t.Errorf("check run %+v", cr)
		}
	})
}

// waitingCreate holds its first create, as a client waiting for a rate limit's reset does, until release
// is closed or the request's context ends (then nothing is sent).
type waitingCreate struct {
	*fakeGitHub
	entered, release chan struct{}
	once             sync.Once
}

func (w *waitingCreate) CreateCheckRun(ctx context.Context, repo ghclient.Repo, cr checksapi.CheckRun) (int64, error) {
	first := false
	w.once.Do(func() { first = true })
	if first {
		close(w.entered)
		select {
		case <-w.release:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	return w.fakeGitHub.CreateCheckRun(ctx, repo, cr)
}
