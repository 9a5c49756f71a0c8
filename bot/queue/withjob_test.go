package queue

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/internal/pgtest"
)

// What a job's WithJob records commits with the job: it sees the job's ID, it is not run for a duplicate,
// and when it fails the job is not queued either (no worker may start a job whose records are missing).
func TestWithJobCommitsWithTheJob(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bk backend) {
		q := bk.open(t)
		ctx := t.Context()
		if _, err := q.DB().ExecContext(ctx, "CREATE TABLE side (job_id INTEGER NOT NULL)"); err != nil {
			t.Fatal(err)
		}
		record := func(ctx context.Context, tx *Tx, id int64) error {
			_, err := tx.ExecContext(ctx, "INSERT INTO side (job_id) VALUES (?)", id)
			return err
		}
		a := enqueue(t, q, Job{Delivery: "d1", Repo: "o/r", WithJob: record})
		dup := enqueue(t, q, Job{Delivery: "d1", Repo: "o/r", WithJob: func(context.Context, *Tx, int64) error {
			t.Error("WithJob ran for a duplicate delivery")
			return nil
		}})
		if !dup.Duplicate {
			t.Fatal("the replay is not a duplicate")
		}
		refused := errors.New("refused")
		if _, err := q.Enqueue(ctx, Job{Delivery: "d2", Kind: "check", Repo: "o/r", WithJob: func(ctx context.Context, tx *Tx, id int64) error {
			if err := record(ctx, tx, id); err != nil {
				return err
			}
			return refused
		}}); !errors.Is(err, refused) {
			t.Fatalf("enqueue with a failing WithJob: %v", err)
		}
		var ids []int64
		rows, err := q.DB().QueryContext(ctx, "SELECT job_id FROM side")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		rows.Close()
		if len(ids) != 1 || ids[0] != a.ID {
			t.Errorf("side records %v, want [%d]", ids, a.ID)
		}
		depth, err := q.Depth(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if depth[Queued] != 1 {
			t.Errorf("queued = %d, want 1 (the refused job rolled back)", depth[Queued])
		}
	})
}

// An event another process notifies that is not the queue's own reaches the pool's OnEvent (PostgreSQL:
// on SQLite one process has the queue and Notify sends nothing).
func TestOtherEventsReachOnEvent(t *testing.T) {
	dsn := pgtest.Start(t)
	q1, q2 := open(t, dsn), open(t, dsn)
	got := make(chan string, 16)
	p := &Pool{Queue: q1, Workers: 1, Poll: 10 * time.Millisecond, Handler: func(context.Context, *Job) error { return nil },
		OnEvent: func(e string) { got <- e }}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	defer func() { cancel(); <-done }()
	for {
		if err := q2.Notify(t.Context(), "checkrun"); err != nil {
			t.Fatal(err)
		}
		select {
		case e := <-got:
			if e != "checkrun" {
				t.Fatalf("OnEvent got %q", e)
			}
			return
		case <-time.After(100 * time.Millisecond): // the listener may not be listening yet: notify again
		case <-t.Context().Done():
			t.Fatal("the event never reached OnEvent")
		}
	}
}
