package checkrun

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/catalogbot/catalogbot/bot/checkrun/internal/checksapi"
	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/bot/queue"
)

// Claim records a queued run's check run with a create lease for the announcer, before any worker can
// start the run. It returns the lease (0 when the run has its check run record already: a worker got
// there first); the claimer then calls Announce or Release with it.
// tx is the transaction to record the claim in (the job's enqueue: queue.Job.WithJob), nil for none.
func (o *Owner) Claim(ctx context.Context, tx *queue.Tx, ref Ref) (int64, error) {
	lease := now() + o.createLease.Milliseconds()
	var ex execer = o.db
	if tx != nil {
		ex = tx
	}
	res, err := ex.ExecContext(ctx, `INSERT INTO check_runs (run_id, head_sha, state, attempt, creating_until)
		VALUES (?,?,?,?,?) ON CONFLICT (run_id) DO NOTHING`, ref.Run, ref.HeadSHA, string(Queued), ref.Attempt, lease)
	if err != nil {
		return 0, fmt.Errorf("claim the check run of run %d: %w", ref.Run, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return 0, err
	}
	return lease, nil
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Announce creates the check run of a run claimed with lease, queued (shown in progress) with title and
// summary; false when the claim ran out or was released before (a worker creates it). A worker that
// started the run meanwhile waits for this create and then updates it. The claim is taken for the create
// in one compare-and-set, with nothing read first: the announcement is the bot's first answer.
func (o *Owner) Announce(ctx context.Context, gh ghclient.GitHub, ref Ref, lease int64, title, summary string) (bool, error) {
	api, err := o.checks(gh)
	if err != nil {
		return false, err
	}
	until, ok, err := o.takeLease(ctx, ref, lease)
	if err != nil || !ok {
		return false, err
	}
	// Nothing was sent under the claim's lease: every create sent moved the lease first.
	_, created, err := o.send(ctx, api, ref, false, until, o.output(ref, title, summary))
	return created, err
}

// Release gives up a claim without creating (the announcement was dropped): a worker creates the check run.
func (o *Owner) Release(ctx context.Context, ref Ref, lease int64) error {
	_, err := o.exec(ctx, "release the create lease", ref.Run,
		"UPDATE check_runs SET creating_until = 0 WHERE run_id = ? AND check_run_id = 0 AND creating_until = ?", ref.Run, lease)
	o.notify()
	return err
}

// Start takes the run for ref.Attempt and shows it in progress (creating the check run if nothing did):
// ErrNotOwner when the run was settled or a newer attempt took it. It returns the check run's ID and
// whether this call created it.
func (o *Owner) Start(ctx context.Context, gh ghclient.GitHub, ref Ref, title, summary string) (id int64, created bool, err error) {
	api, err := o.checks(gh)
	if err != nil {
		return 0, false, err
	}
	r, err := o.get(ctx, ref.Run)
	if err != nil {
		return 0, false, err
	}
	var ok bool
	switch {
	case r == nil:
		ok, err = o.insert(ctx, ref, InProgress, 0)
		if err == nil && !ok { // an announcer claimed it just now
			ok, err = o.move(ctx, ref, []State{Queued, InProgress}, InProgress, ref.Attempt, "", "", "")
		}
	case r.head != ref.HeadSHA:
		ok, err = o.restart(ctx, ref, r.head)
	default:
		ok, err = o.move(ctx, ref, []State{Queued, InProgress}, InProgress, ref.Attempt, "", "", "")
	}
	if err != nil {
		return 0, false, err
	}
	if !ok {
		return 0, false, ErrNotOwner
	}
	cr := o.output(ref, title, summary)
	if id, created, err = o.create(ctx, api, ref, cr); err != nil || created {
		return id, created, err
	}
	if err := o.write(ctx, api, ref, id, cr); err != nil {
		return 0, false, err
	}
	return id, false, o.reassert(ctx, api, ref, id)
}

// reassert repeats a settled run's closing write after an in-progress write that may have crossed it (a
// settle between the caller's state check and its request): GitHub keeps the last write.
func (o *Owner) reassert(ctx context.Context, api checksapi.API, ref Ref, id int64) error {
	r, err := o.get(ctx, ref.Run)
	if err != nil || r == nil || r.conclusion == "" || r.state != Superseded && r.state != Completed {
		return err
	}
	return o.write(ctx, api, ref, id, checksapi.CheckRun{Name: o.name, Conclusion: r.conclusion, Title: r.title, Summary: r.summary})
}

// Progress shows an in-progress title and summary, while ref.Attempt holds the run in progress.
func (o *Owner) Progress(ctx context.Context, gh ghclient.GitHub, ref Ref, title, summary string) error {
	api, r, err := o.inProgressBy(ctx, gh, ref)
	if err != nil {
		return err
	}
	if err := o.write(ctx, api, ref, r.id, checksapi.CheckRun{Name: o.name, Status: "in_progress", Title: title, Summary: summary}); err != nil {
		return err
	}
	return o.reassert(ctx, api, ref, r.id)
}

// inProgressBy is the Checks API of gh and the run's record, while ref.Attempt holds the run in progress
// with its check run on ref.HeadSHA; ErrNotOwner otherwise.
func (o *Owner) inProgressBy(ctx context.Context, gh ghclient.GitHub, ref Ref) (checksapi.API, *row, error) {
	api, err := o.checks(gh)
	if err != nil {
		return nil, nil, err
	}
	r, err := o.get(ctx, ref.Run)
	if err != nil {
		return nil, nil, err
	}
	if r == nil || r.state != InProgress || r.attempt != ref.Attempt || r.id == 0 || r.head != ref.HeadSHA {
		return nil, nil, ErrNotOwner
	}
	return api, r, nil
}

// Complete posts the outcome of the run ref.Attempt holds in progress: the annotations in batches of 50
// (each request repeats title and summary, as GitHub requires an output with them), the last batch with
// the conclusion; then the run moves to completed. ErrNotOwner, writing nothing, when the run was settled
// or a newer attempt took it. A failed request leaves the run in progress for the job's next attempt.
func (o *Owner) Complete(ctx context.Context, gh ghclient.GitHub, ref Ref, out Output) error {
	api, r, err := o.inProgressBy(ctx, gh, ref)
	if err != nil {
		return err
	}
	anns := annotations(out.Annotations)
	for len(anns) > annotationsPerRequest {
		batch := anns[:annotationsPerRequest]
		anns = anns[annotationsPerRequest:]
		if err := o.write(ctx, api, ref, r.id, checksapi.CheckRun{Name: o.name, Title: out.Title, Summary: out.Summary, Annotations: batch}); err != nil {
			return err
		}
	}
	if err := o.write(ctx, api, ref, r.id, checksapi.CheckRun{Name: o.name, Conclusion: out.Conclusion, DetailsURL: ref.DetailsURL,
		Title: out.Title, Summary: out.Summary, Annotations: anns}); err != nil {
		return err
	}
	ok, err := o.held(ctx, ref, InProgress, Completed, out.Conclusion, out.Title, "")
	if err != nil {
		return err
	}
	if !ok {
		// Settled while the outcome was being sent: the settled outcome is the last word.
		if err := o.reassert(ctx, api, ref, r.id); err != nil {
			return err
		}
		return ErrNotOwner
	}
	return nil
}

// Settle closes a run's check run that will not complete the normal way (from one of from) with
// conclusion, title and summary: superseded when the conclusion is cancelled, completed otherwise. Only
// the caller whose move succeeds writes; false for the others. A check run being created is closed once
// it exists; one never created is not created to be closed.
func (o *Owner) Settle(ctx context.Context, gh ghclient.GitHub, ref Ref, from []State, conclusion, title, summary string) (bool, error) {
	api, err := o.checks(gh)
	if err != nil {
		return false, err
	}
	to := Completed
	if conclusion == "cancelled" {
		to = Superseded
	}
	ok, err := o.move(ctx, ref, from, to, -1, conclusion, title, summary)
	if err != nil || !ok {
		return false, err
	}
	id, err := o.existing(ctx, api, ref)
	if err != nil || id == 0 {
		return true, err
	}
	return true, o.write(ctx, api, ref, id, checksapi.CheckRun{Name: o.name, Conclusion: conclusion, Title: title, Summary: summary})
}

// Await returns once no create of the run's check run is in flight (none was claimed, it was recorded,
// or its lease ran out), so that the caller's requests follow it.
func (o *Owner) Await(ctx context.Context, run int64) error {
	for {
		r, err := o.get(ctx, run)
		if err != nil || r == nil || r.id != 0 || r.creatingUntil <= now() {
			return err
		}
		if err := o.wait(ctx, r.creatingUntil); err != nil {
			return err
		}
	}
}

// StateOf is a run's check run state ("" when it has none) and its check run ID.
func (o *Owner) StateOf(ctx context.Context, run int64) (State, int64, error) {
	r, err := o.get(ctx, run)
	if err != nil || r == nil {
		return "", 0, err
	}
	return r.state, r.id, nil
}

func (o *Owner) output(ref Ref, title, summary string) checksapi.CheckRun {
	return checksapi.CheckRun{Name: o.name, HeadSHA: ref.HeadSHA, Status: "in_progress", DetailsURL: ref.DetailsURL,
		ExternalID: ExternalID(ref.Run), Title: title, Summary: summary}
}

// write is every check run update.
func (o *Owner) write(ctx context.Context, api checksapi.API, ref Ref, id int64, cr checksapi.CheckRun) error {
	if err := api.UpdateCheckRun(ctx, ref.Repo, id, cr); err != nil {
		return fmt.Errorf("update check run %d of run %d: %w", id, ref.Run, err)
	}
	return nil
}

// create returns the run's check run, creating it with cr unless it exists (created is then false). A
// create in flight elsewhere is waited for; a create that was sent but never recorded is looked up by
// external ID first (the announcer's create is Announce).
func (o *Owner) create(ctx context.Context, api checksapi.API, ref Ref, cr checksapi.CheckRun) (id int64, created bool, err error) {
	var r *row
	for {
		if r == nil {
			if r, err = o.get(ctx, ref.Run); err != nil {
				return 0, false, err
			}
			if r == nil {
				return 0, false, fmt.Errorf("run %d has no check run record", ref.Run)
			}
		}
		if r.id != 0 {
			return r.id, false, nil
		}
		lease := r.creatingUntil
		if lease > now() {
			if err := o.wait(ctx, lease); err != nil {
				return 0, false, err
			}
			r = nil
			continue
		}
		until, ok, err := o.takeLease(ctx, ref, lease)
		if err != nil {
			return 0, false, err
		}
		if !ok {
			r = nil
			continue
		}
		return o.send(ctx, api, ref, r.started, until, cr)
	}
}

// takeLease marks a create started under a new lease, if the run's create lease is still lease and no
// check run is recorded (compare-and-set), and returns the new lease.
func (o *Owner) takeLease(ctx context.Context, ref Ref, lease int64) (int64, bool, error) {
	until := max(now()+o.createLease.Milliseconds(), lease+1)
	ok, err := o.exec(ctx, "start creating the check run", ref.Run, `UPDATE check_runs SET create_started = 1, creating_until = ?
		WHERE run_id = ? AND check_run_id = 0 AND creating_until = ? AND head_sha = ?`, until, ref.Run, lease, ref.HeadSHA)
	return until, ok, err
}

// send creates the check run under the lease until (found again by external ID first when an earlier
// create was sent), records it and wakes the writers waiting for it.
// The requests are cut before the lease runs out (sendDeadline): a create waiting for a rate limit to
// reset is never sent after another writer may have taken over.
func (o *Owner) send(ctx context.Context, api checksapi.API, ref Ref, sentBefore bool, until int64, cr checksapi.CheckRun) (int64, bool, error) {
	defer o.notify()
	leased, cancel := context.WithDeadline(ctx, o.sendDeadline(until))
	defer cancel()
	var id int64
	var err error
	if sentBefore {
		if id, err = api.FindCheckRun(leased, ref.Repo, ref.HeadSHA, o.name, ExternalID(ref.Run)); err != nil {
			o.unlease(ref, until)
			return 0, false, fmt.Errorf("look up the check run of run %d: %w", ref.Run, leaseCut(ctx, err))
		}
	}
	created := id == 0
	if created {
		if id, err = api.CreateCheckRun(leased, ref.Repo, cr); err != nil {
			o.unlease(ref, until)
			return 0, false, fmt.Errorf("create the check run of run %d: %w", ref.Run, leaseCut(ctx, err))
		}
	}
	r, err := o.record(context.WithoutCancel(ctx), ref.Run, id, until)
	if err != nil {
		return 0, false, err
	}
	if r == nil {
		// The lease ran out and another writer took over; its check run is the one recorded.
		return 0, false, fmt.Errorf("check run %d of run %d: created after its create lease ran out", id, ref.Run)
	}
	// A settle that happened while the create was in flight found nothing to close: close it now.
	if (r.state == Completed || r.state == Superseded) && r.conclusion != "" {
		if err := o.write(context.WithoutCancel(ctx), api, ref, id, checksapi.CheckRun{Name: o.name, Conclusion: r.conclusion,
			Title: r.title, Summary: r.summary}); err != nil {
			return id, created, err
		}
	}
	return id, created, nil
}

// sendDeadline is when the requests of a create under the lease until (unix ms) must be done: a margin
// (a quarter of the lease, at most 5 s) before it runs out, so that a writer taking over after it, which
// looks the check run up before creating one, does not race a request this writer sent late.
func (o *Owner) sendDeadline(until int64) time.Time {
	return time.UnixMilli(until).Add(-min(o.createLease/4, 5*time.Second))
}

// errLeaseCut: a create's requests were cut when its lease was about to run out.
var errLeaseCut = errors.New("the create lease ran out before GitHub answered (another writer creates the check run)")

// leaseCut names err as the lease's cut when the lease's deadline, not the caller's context, ended it.
func leaseCut(ctx context.Context, err error) error {
	if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", errLeaseCut, err)
	}
	return err
}

// unlease ends a failed create's lease at once (its create_started stays: the request may have landed).
func (o *Owner) unlease(ref Ref, until int64) {
	_, _ = o.exec(context.Background(), "end the create lease", ref.Run,
		"UPDATE check_runs SET creating_until = 0 WHERE run_id = ? AND check_run_id = 0 AND creating_until = ?", ref.Run, until)
}

// existing is the check run of a run without creating one: it waits for a create in flight and looks up
// a create sent but never recorded; 0 when none was ever sent.
func (o *Owner) existing(ctx context.Context, api checksapi.API, ref Ref) (int64, error) {
	for {
		r, err := o.get(ctx, ref.Run)
		if err != nil || r == nil {
			return 0, err
		}
		if r.id != 0 {
			return r.id, nil
		}
		if r.creatingUntil > now() {
			if r.state == Superseded || r.state == Completed {
				// the creator closes it after recording it (send)
				return 0, nil
			}
			if err := o.wait(ctx, r.creatingUntil); err != nil {
				return 0, err
			}
			continue
		}
		if !r.started {
			return 0, nil
		}
		id, err := api.FindCheckRun(ctx, ref.Repo, ref.HeadSHA, o.name, ExternalID(ref.Run))
		if err != nil {
			return 0, fmt.Errorf("look up the check run of run %d: %w", ref.Run, err)
		}
		if id != 0 {
			_, err = o.exec(ctx, "record check run", ref.Run, "UPDATE check_runs SET check_run_id = ? WHERE run_id = ? AND check_run_id = 0", id, ref.Run)
		}
		return id, err
	}
}

// wait blocks until a create ends (here, or in another process that broadcast it), the lease until (unix ms) runs out, or ctx is done.
func (o *Owner) wait(ctx context.Context, until int64) error {
	o.mu.Lock()
	ch := o.changed
	o.mu.Unlock()
	t := time.NewTimer(time.Until(time.UnixMilli(until)) + time.Millisecond)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// notify wakes the writers waiting for a create, here and, through Broadcast, in the other processes.
func (o *Owner) notify() {
	o.Wake()
	if o.Broadcast != nil {
		_ = o.Broadcast(context.Background()) // best effort: a waiter missing it goes on when the lease runs out
	}
}

// Wake wakes this process's writers waiting for a create (another process ended one).
func (o *Owner) Wake() {
	o.mu.Lock()
	defer o.mu.Unlock()
	close(o.changed)
	o.changed = make(chan struct{})
}

// IsNotOwner reports whether err says the run moved on without the caller.
func IsNotOwner(err error) bool { return errors.Is(err, ErrNotOwner) }

func annotations(in []reportAnnotation) []checksapi.Annotation {
	out := make([]checksapi.Annotation, len(in))
	for i, a := range in {
		out[i] = checksapi.Annotation{Path: a.Path, StartLine: a.StartLine, EndLine: a.EndLine, Level: a.Level, Title: a.Title, Message: a.Message}
	}
	return out
}
