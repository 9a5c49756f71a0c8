package queue

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
)

// On PostgreSQL, several processes share the queue: each one LISTENs on notifyChannel, and whoever queues
// a job or asks running jobs to stop NOTIFYs it in the same transaction (delivered on commit), so idle
// workers of every replica wake at once rather than at their next poll, and a push delivered to one
// replica stops the check running in another within milliseconds rather than at its next heartbeat.
const notifyChannel = "catalogbot_queue"

// Events Listen reports.
const (
	// EventJob: a job was queued (or requeued) and may be claimable.
	EventJob = "job"
	// EventCancel: running jobs were asked to stop (see Heartbeat).
	EventCancel = "cancel"
)

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// notify sends events to every listening process, in one statement, when tx commits if db is a
// transaction (PostgreSQL only: on SQLite one process has the queue).
func (q *Queue) notify(ctx context.Context, db execer, events ...string) error {
	if q.db.dialect != Postgres || len(events) == 0 {
		return nil
	}
	calls := make([]string, len(events))
	args := make([]any, 0, 2*len(events))
	for i, e := range events {
		calls[i] = "pg_notify(?, ?)"
		args = append(args, notifyChannel, e)
	}
	if _, err := db.ExecContext(ctx, "SELECT "+strings.Join(calls, ", "), args...); err != nil {
		return fmt.Errorf("notify %s: %w", strings.Join(events, ", "), err)
	}
	return nil
}

// Notify sends event to every process listening (PostgreSQL; nothing on SQLite, where one process has
// the queue). Events other than EventJob and EventCancel reach Pool.OnEvent.
func (q *Queue) Notify(ctx context.Context, event string) error { return q.notify(ctx, q.db, event) }

// Notifies tells whether Listen reports anything: the queue is shared by processes (PostgreSQL).
func (q *Queue) Notifies() bool { return q.db.dialect == Postgres }

// Listen calls fn with each event any process notifies (EventJob, EventCancel; this process's own too)
// until ctx is done. It holds one connection; when the connection breaks it reconnects after a second,
// calls onErr with why, and reports EventJob and EventCancel once, since events sent while it was not
// listening are lost. On SQLite it returns at once.
func (q *Queue) Listen(ctx context.Context, fn func(event string), onErr func(error)) {
	if !q.Notifies() {
		return
	}
	for ctx.Err() == nil {
		err := q.listen(ctx, fn)
		if ctx.Err() != nil {
			return
		}
		if onErr != nil {
			onErr(fmt.Errorf("listen for queue events on %s: %w", q.db.name, err))
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

func (q *Queue) listen(ctx context.Context, fn func(event string)) error {
	conn, err := q.db.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("the queue's database driver is %T, not pgx", dc)
		}
		pc := sc.Conn()
		if _, err := pc.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
			return err
		}
		// Whatever was notified before LISTEN took effect is looked at now.
		fn(EventJob)
		fn(EventCancel)
		for {
			n, err := pc.WaitForNotification(ctx)
			if err != nil {
				// The connection goes back to the pool still listening unless it is discarded.
				return fmt.Errorf("%w (%w)", driver.ErrBadConn, err)
			}
			fn(n.Payload)
		}
	})
}
