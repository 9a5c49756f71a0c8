package queue

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// ErrLeaseLost is returned when a job's claim is no longer valid: its lease expired and it was requeued
// (or it was finished by someone else). The worker must stop and not report a result.
var ErrLeaseLost = errors.New("job lease lost")

const jobColumns = `id, delivery, event, kind, repo, supersede_key, cancel_running, serial_key, payload, state, attempts,
	token, error, created_at, started_at, finished_at, run_after`

func scanJob(row interface{ Scan(...any) error }) (*Job, error) {
	var j Job
	var created, started, finished, runAfter int64
	if err := row.Scan(&j.ID, &j.Delivery, &j.Event, &j.Kind, &j.Repo, &j.Key, &j.CancelRunning, &j.Serial, &j.Payload,
		&j.State, &j.Attempts, &j.token, &j.Error, &created, &started, &finished, &runAfter); err != nil {
		return nil, err
	}
	j.Created, j.Started, j.Finished, j.RunAfter = fromMS(created), fromMS(started), fromMS(finished), fromMS(runAfter)
	return &j, nil
}

func newToken() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// claimLock is the PostgreSQL advisory lock every claim holds for its transaction.
const claimLock int64 = 0x636174626f740002

// Claim takes the oldest runnable queued job (due, and no running job shares its serial or supersede
// key), marks it running with a lease, and returns it; nil when nothing is runnable.
//
// The guard "no running job shares its key" reads other rows, so two claims running at once could each
// see the other's job as still queued and both start a job of one key. On SQLite the queue's single
// connection serializes claims. On PostgreSQL, where several replicas claim, each claim holds one
// transaction-scoped advisory lock (pg_advisory_xact_lock): claims are serialized across every process,
// and because each statement of a READ COMMITTED transaction takes a new snapshot after the lock is
// granted, a claim sees every earlier claim (committed before its lock was released). A claim takes about
// a millisecond, so serializing them costs nothing here. FOR UPDATE SKIP LOCKED alone would not do: it
// stops two claims taking the same row, not two rows of one serial key.
//
// The claims of one process take turns before they take a connection: a claim waiting for the lock holds
// its transaction's connection, and with every worker of a burst waiting there (8 of the pool's 16) the
// webhook handlers and the announcer, which need a connection to queue a job and create its check run,
// waited for one in turn (a 500-delivery burst: 1,336 waits for a connection, p99 to in progress 1.7 s).
func (q *Queue) Claim(ctx context.Context, lease time.Duration) (*Job, error) {
	if q.db.dialect != Postgres {
		return q.claim(ctx, q.db, lease)
	}
	select {
	case q.claiming <- struct{}{}:
		defer func() { <-q.claiming }()
	case <-ctx.Done():
		return nil, fmt.Errorf("claim a job: %w", context.Cause(ctx))
	}
	tx, err := q.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("claim a job: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", claimLock); err != nil {
		return nil, fmt.Errorf("claim a job: lock: %w", err)
	}
	j, err := q.claim(ctx, tx, lease)
	if err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("claim a job: %w", err)
	}
	return j, nil
}

type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// claim is Claim's statement. The outer state test matters on PostgreSQL: a job superseded between the
// subquery's snapshot and the row lock is re-checked against it and not started.
func (q *Queue) claim(ctx context.Context, db rowQuerier, lease time.Duration) (*Job, error) {
	now := q.now()
	row := db.QueryRowContext(ctx, `UPDATE jobs SET state = ?, token = ?, attempts = attempts + 1, lease_until = ?,
		started_at = ?, cancel_requested = 0
		WHERE state = ? AND id = (
			SELECT j.id FROM jobs j WHERE j.state = ? AND j.run_after <= ?
			AND (j.serial_key = '' OR NOT EXISTS (SELECT 1 FROM jobs r WHERE r.state = ? AND r.serial_key = j.serial_key))
			AND (j.supersede_key = '' OR NOT EXISTS (SELECT 1 FROM jobs r WHERE r.state = ? AND r.supersede_key = j.supersede_key))
			ORDER BY j.id LIMIT 1)
		RETURNING `+jobColumns,
		Running, newToken(), ms(now.Add(lease)), ms(now), Queued, Queued, ms(now), Running, Running)
	j, err := scanJob(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("claim a job: %w", err)
	}
	return j, nil
}

// Heartbeat extends a running job's lease. cancel reports that a newer job asked it to stop.
func (q *Queue) Heartbeat(ctx context.Context, j *Job, lease time.Duration) (cancel bool, err error) {
	err = q.db.QueryRowContext(ctx, `UPDATE jobs SET lease_until = ? WHERE id = ? AND token = ? AND state = ?
		RETURNING cancel_requested`, ms(q.now().Add(lease)), j.ID, j.token, Running).Scan(&cancel)
	if errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("job %d: %w", j.ID, ErrLeaseLost)
	}
	if err != nil {
		return false, fmt.Errorf("renew the lease of job %d: %w", j.ID, err)
	}
	return cancel, nil
}

// finish moves a running job (still held by this claim) to a final or queued state.
func (q *Queue) finish(ctx context.Context, j *Job, set string, args ...any) error {
	args = append(args, j.ID, j.token, Running)
	res, err := q.db.ExecContext(ctx, "UPDATE jobs SET "+set+" WHERE id = ? AND token = ? AND state = ?", args...)
	if err != nil {
		return fmt.Errorf("finish job %d: %w", j.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("job %d: %w", j.ID, ErrLeaseLost)
	}
	return nil
}

// Complete marks a job done.
func (q *Queue) Complete(ctx context.Context, j *Job) error {
	return q.finish(ctx, j, "state = ?, finished_at = ?, token = '', error = ''", Done, ms(q.now()))
}

// Fail records a failed attempt: the job is queued again after backoff, or failed for good when retry is
// false.
func (q *Queue) Fail(ctx context.Context, j *Job, cause error, retry bool, backoff time.Duration) error {
	msg := cause.Error()
	if retry {
		return q.finish(ctx, j, "state = ?, run_after = ?, token = '', error = ?", Queued, ms(q.now().Add(backoff)), msg)
	}
	return q.finish(ctx, j, "state = ?, finished_at = ?, token = '', error = ?", Failed, ms(q.now()), msg)
}

// Defer queues a running job again to run at until, without counting the attempt (see RetryAt).
func (q *Queue) Defer(ctx context.Context, j *Job, cause error, until time.Time) error {
	return q.finish(ctx, j, "state = ?, run_after = ?, token = '', attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END, error = ?",
		Queued, ms(until), cause.Error())
}

// Supersede marks a running job superseded (it stopped because a newer job asked it to).
func (q *Queue) Supersede(ctx context.Context, j *Job, reason string) error {
	return q.finish(ctx, j, "state = ?, finished_at = ?, token = '', error = ?", Superseded, ms(q.now()), reason)
}

// Release puts a running job back in the queue without counting the attempt (graceful shutdown).
func (q *Queue) Release(ctx context.Context, j *Job) error {
	if err := q.finish(ctx, j, "state = ?, token = '', attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END, started_at = 0", Queued); err != nil {
		return err
	}
	// Another replica may take it now; if the notification is lost, its poll does.
	_ = q.notify(ctx, q.db, EventJob)
	return nil
}

// RequeueExpired queues again every running job whose lease has expired (its worker died), or fails it
// when it has used maxAttempts attempts. It returns the requeued and failed job IDs.
func (q *Queue) RequeueExpired(ctx context.Context, maxAttempts int) (requeued, failed []int64, err error) {
	tx, err := q.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, nil, err
	}
	defer tx.Rollback()
	now := ms(q.now())
	if failed, err = ids(ctx, tx, `UPDATE jobs SET state = ?, token = '', finished_at = ?,
		error = 'its worker stopped renewing the lease ' || attempts || ' times'
		WHERE state = ? AND lease_until < ? AND attempts >= ? RETURNING id`, Failed, now, Running, now, maxAttempts); err != nil {
		return nil, nil, fmt.Errorf("fail expired jobs: %w", err)
	}
	if requeued, err = ids(ctx, tx, `UPDATE jobs SET state = ?, token = '', error = 'requeued: its lease expired'
		WHERE state = ? AND lease_until < ? RETURNING id`, Queued, Running, now); err != nil {
		return nil, nil, fmt.Errorf("requeue expired jobs: %w", err)
	}
	if len(requeued) > 0 {
		if err := q.notify(ctx, tx, EventJob); err != nil {
			return nil, nil, fmt.Errorf("requeue expired jobs: %w", err)
		}
	}
	return requeued, failed, tx.Commit()
}

// NextDue is when the earliest delayed queued job becomes runnable (zero when none is delayed).
func (q *Queue) NextDue(ctx context.Context) (time.Time, error) {
	var next sql.NullInt64
	err := q.db.QueryRowContext(ctx, "SELECT min(run_after) FROM jobs WHERE state = ? AND run_after > ?", Queued, ms(q.now())).Scan(&next)
	if err != nil || !next.Valid {
		return time.Time{}, err
	}
	return fromMS(next.Int64), nil
}
