// Package queue is the bot's durable job queue: one job per webhook delivery, deduplicated by the
// delivery ID, in an embedded SQLite database (modernc.org/sqlite, pure Go, WAL; the default, one
// process) or in PostgreSQL (pgx; several replicas sharing one database).
//
// A job is claimed with a lease that its worker renews while it runs; a job whose lease expired (its
// process was killed) is queued again, so kill -9 loses nothing. A job may name a supersede key (one pull
// request): a newer job with the same key supersedes the queued ones and asks the running one to stop. A
// job may name a serial key (one repository's merges and publishes): at most one job per serial key runs
// at a time, across every process sharing the database. Every state change is one SQL statement or
// transaction, so the database is the truth.
package queue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// State of a job.
type State string

const (
	Queued     State = "queued"
	Running    State = "running"
	Done       State = "done"
	Failed     State = "failed"
	Superseded State = "superseded"
)

// States lists every state, in lifecycle order.
var States = []State{Queued, Running, Done, Failed, Superseded}

// Job is one unit of work.
type Job struct {
	ID int64
	// Delivery is the deduplication key: the X-GitHub-Delivery header, or a derived key for follow-up jobs.
	Delivery string
	// Event is the webhook event that caused the job; Kind says what to do; Repo is "owner/name".
	Event, Kind, Repo string
	// Key is the supersede key ("" for none): a newer job with the same key supersedes this one.
	Key string
	// CancelRunning makes a new job with Key ask a running job with the same Key to stop, not only
	// supersede queued ones.
	CancelRunning bool
	// Serial is the serialization key ("" for none): jobs with the same Serial never run at once.
	Serial  string
	Payload []byte

	State    State
	Attempts int
	Error    string
	// Created, Started and Finished are wall-clock times (zero when not reached).
	Created, Started, Finished time.Time
	// RunAfter delays a retried job.
	RunAfter time.Time
	// WithJob, when set, runs in Enqueue's transaction once the job's row is written (not for a
	// duplicate): what it records commits with the job, before any worker can claim it.
	WithJob func(ctx context.Context, tx *Tx, id int64) error

	token string // the claim's fencing token
}

// Queue is an open queue database.
type Queue struct {
	db  *DB
	now func() time.Time
	// claiming lets one of this process's claims at a time take a connection and wait for the claim lock
	// (PostgreSQL): see Claim.
	claiming chan struct{}
}

const sqliteSchema = `
CREATE TABLE IF NOT EXISTS jobs (
	id              INTEGER PRIMARY KEY AUTOINCREMENT,
	delivery        TEXT    NOT NULL UNIQUE,
	event           TEXT    NOT NULL,
	kind            TEXT    NOT NULL,
	repo            TEXT    NOT NULL,
	supersede_key   TEXT    NOT NULL DEFAULT '',
	cancel_running  INTEGER NOT NULL DEFAULT 0,
	serial_key      TEXT    NOT NULL DEFAULT '',
	payload         BLOB    NOT NULL,
	state           TEXT    NOT NULL,
	attempts        INTEGER NOT NULL DEFAULT 0,
	token           TEXT    NOT NULL DEFAULT '',
	lease_until     INTEGER NOT NULL DEFAULT 0,
	cancel_requested INTEGER NOT NULL DEFAULT 0,
	run_after       INTEGER NOT NULL DEFAULT 0,
	error           TEXT    NOT NULL DEFAULT '',
	created_at      INTEGER NOT NULL,
	started_at      INTEGER NOT NULL DEFAULT 0,
	finished_at     INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state, run_after, id);
CREATE INDEX IF NOT EXISTS jobs_supersede ON jobs(supersede_key, state) WHERE supersede_key != '';
CREATE INDEX IF NOT EXISTS jobs_serial ON jobs(serial_key, state) WHERE serial_key != '';
`

// Open opens (creating its tables if needed) the queue database named by dsn: a postgres:// or
// postgresql:// URL opens PostgreSQL, anything else is the path of a SQLite file. SQLite runs in WAL mode
// with synchronous=NORMAL: a committed job survives the process being killed. Errors never contain the
// URL's password.
func Open(ctx context.Context, dsn string) (*Queue, error) {
	var db *DB
	var err error
	if IsPostgres(dsn) {
		db, err = openPostgres(ctx, dsn)
	} else {
		db, err = openSQLite(dsn)
	}
	if err != nil {
		return nil, err
	}
	if err := db.CreateTables(ctx, "the queue's tables", sqliteSchema); err != nil {
		db.db.Close()
		return nil, err
	}
	return &Queue{db: db, now: time.Now, claiming: make(chan struct{}, 1)}, nil
}

// DB is the underlying database, for the bot's own tables (runs, approvals). Keep transactions short:
// on SQLite the queue shares its single connection.
func (q *Queue) DB() *DB { return q.db }

// Close closes the database. Running jobs stay "running" until their lease expires and another Queue
// (after a restart, or another replica) requeues them.
func (q *Queue) Close() error { return q.db.db.Close() }

// Ping checks that the database answers.
func (q *Queue) Ping(ctx context.Context) error {
	var one int
	if err := q.db.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("queue database %s: %w", q.db.name, err)
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v)
}

// Enqueued is the outcome of Enqueue.
type Enqueued struct {
	ID int64
	// Duplicate: a job with this delivery already exists (ID is that job's).
	Duplicate bool
	// Superseded are the queued jobs this one replaced; Cancel are running jobs asked to stop.
	Superseded, Cancel []int64
}

// Enqueue adds a job unless one with the same Delivery exists. With a Key, older queued jobs with the
// same Key are superseded and (with CancelRunning) running ones are asked to stop.
func (q *Queue) Enqueue(ctx context.Context, j Job) (Enqueued, error) {
	if j.Delivery == "" || j.Kind == "" {
		return Enqueued{}, fmt.Errorf("enqueue: a job needs a delivery and a kind")
	}
	if j.Payload == nil {
		j.Payload = []byte{}
	}
	tx, err := q.db.BeginTx(ctx, nil)
	if err != nil {
		return Enqueued{}, fmt.Errorf("enqueue %s: %w", j.Delivery, err)
	}
	defer tx.Rollback()
	now := ms(q.now())
	var out Enqueued
	err = tx.QueryRowContext(ctx, `INSERT INTO jobs (delivery, event, kind, repo, supersede_key, cancel_running, serial_key,
		payload, state, created_at, run_after) VALUES (?,?,?,?,?,?,?,?,?,?,?)
		ON CONFLICT(delivery) DO NOTHING RETURNING id`,
		j.Delivery, j.Event, j.Kind, j.Repo, j.Key, boolInt(j.CancelRunning), j.Serial, j.Payload, Queued, now, ms(j.RunAfter)).Scan(&out.ID)
	if errors.Is(err, sql.ErrNoRows) {
		if err := tx.QueryRowContext(ctx, "SELECT id FROM jobs WHERE delivery = ?", j.Delivery).Scan(&out.ID); err != nil {
			return Enqueued{}, fmt.Errorf("enqueue %s: %w", j.Delivery, err)
		}
		out.Duplicate = true
		return out, tx.Commit()
	}
	if err != nil {
		return Enqueued{}, fmt.Errorf("enqueue %s: %w", j.Delivery, err)
	}
	if j.WithJob != nil {
		if err := j.WithJob(ctx, tx, out.ID); err != nil {
			return Enqueued{}, fmt.Errorf("enqueue %s: %w", j.Delivery, err)
		}
	}
	events := []string{EventJob}
	if j.Key != "" {
		// One statement supersedes the queued jobs of the key and (with CancelRunning) asks its running
		// ones to stop: the enqueue is on every delivery's path.
		running := Queued // without CancelRunning, running jobs are left alone
		if j.CancelRunning {
			running = Running
		}
		rows, err := tx.QueryContext(ctx, `UPDATE jobs SET
			state = CASE WHEN state = ? THEN ? ELSE state END,
			finished_at = CASE WHEN state = ? THEN ? ELSE finished_at END,
			error = CASE WHEN state = ? THEN ? ELSE error END,
			cancel_requested = CASE WHEN state = ? THEN 1 ELSE cancel_requested END
			WHERE supersede_key = ? AND state IN (?, ?) AND id < ? RETURNING id, state`,
			Queued, Superseded, Queued, now, Queued, fmt.Sprintf("superseded by job %d", out.ID), Running,
			j.Key, Queued, running, out.ID)
		if err != nil {
			return Enqueued{}, fmt.Errorf("enqueue %s: supersede: %w", j.Delivery, err)
		}
		if out.Superseded, out.Cancel, err = byState(rows); err != nil {
			return Enqueued{}, fmt.Errorf("enqueue %s: supersede: %w", j.Delivery, err)
		}
		if len(out.Cancel) > 0 {
			events = append(events, EventCancel)
		}
	}
	if err := q.notify(ctx, tx, events...); err != nil {
		return Enqueued{}, fmt.Errorf("enqueue %s: %w", j.Delivery, err)
	}
	return out, tx.Commit()
}

// CancelKey supersedes every queued job with key and asks running ones to stop (a closed pull request).
func (q *Queue) CancelKey(ctx context.Context, key, reason string) (superseded, cancel []int64, err error) {
	if key == "" {
		return nil, nil, nil
	}
	tx, err := q.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, nil, err
	}
	defer tx.Rollback()
	if superseded, err = ids(ctx, tx, `UPDATE jobs SET state = ?, finished_at = ?, error = ? WHERE supersede_key = ? AND state = ? RETURNING id`,
		Superseded, ms(q.now()), reason, key, Queued); err != nil {
		return nil, nil, fmt.Errorf("cancel jobs for %s: %w", key, err)
	}
	if cancel, err = ids(ctx, tx, `UPDATE jobs SET cancel_requested = 1 WHERE supersede_key = ? AND state = ? RETURNING id`, key, Running); err != nil {
		return nil, nil, fmt.Errorf("cancel jobs for %s: %w", key, err)
	}
	if len(cancel) > 0 {
		if err := q.notify(ctx, tx, EventCancel); err != nil {
			return nil, nil, fmt.Errorf("cancel jobs for %s: %w", key, err)
		}
	}
	return superseded, cancel, tx.Commit()
}

// byState splits the (id, state) rows of a supersede into the jobs superseded and the running ones asked
// to stop.
func byState(rows *sql.Rows) (superseded, cancel []int64, err error) {
	defer rows.Close()
	for rows.Next() {
		var id int64
		var s State
		if err := rows.Scan(&id, &s); err != nil {
			return nil, nil, err
		}
		if s == Running {
			cancel = append(cancel, id)
		} else {
			superseded = append(superseded, id)
		}
	}
	return superseded, cancel, rows.Err()
}

func ids(ctx context.Context, tx *Tx, query string, args ...any) ([]int64, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}
