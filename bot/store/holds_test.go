package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/catalogbot/catalogbot/bot/queue"
	"github.com/catalogbot/catalogbot/internal/pgtest"
)

// The hold history: what is in force after each event, and the holders recorded before the history
// existed (the holds table of an existing database) carried into it once, on the next start.
func TestHoldHistory(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { checkHoldHistory(t, filepath.Join(t.TempDir(), "q.db")) })
	t.Run("postgres", func(t *testing.T) { checkHoldHistory(t, pgtest.Start(t)) })
}

// testStore opens the queue database db (a path or a PostgreSQL DSN), closed when the test ends, and the
// bot's store in it.
func testStore(t *testing.T, db string) (*queue.Queue, *Store) {
	t.Helper()
	q, err := queue.Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	s, err := Open(t.Context(), q.DB())
	if err != nil {
		t.Fatal(err)
	}
	return q, s
}

func checkHoldHistory(t *testing.T, db string) {
	ctx := context.Background()
	q, s := testStore(t, db)
	const repo = "octo/catalog"
	state := func(pr int) string {
		t.Helper()
		st, err := s.HoldOf(ctx, repo, pr)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("held %v by %v unknown %v, %d events", st.Held, st.Holders, st.Unknown, len(st.History))
	}
	steps := []struct {
		do   func() error
		want string
	}{
		{func() error { return nil }, "held false by [] unknown false, 0 events"},
		{func() error { return s.RecordHold(ctx, repo, 1, "Admin", ViaCommand) }, "held true by [admin] unknown false, 1 events"},
		{func() error { return s.RecordHold(ctx, repo, 1, "tess", ViaLabel) }, "held true by [admin tess] unknown false, 2 events"},
		{func() error { return s.RecordHold(ctx, repo, 1, "admin", ViaCommand) }, "held true by [admin tess] unknown false, 3 events"},
		{func() error { return s.RecordLift(ctx, repo, 1, "admin", ViaCommand) }, "held false by [] unknown false, 4 events"},
		{func() error { return s.RecordHold(ctx, repo, 1, "", ViaFound) }, "held true by [] unknown true, 5 events"},
		{func() error { return s.RecordHold(ctx, repo, 1, "tess", ViaCommand) }, "held true by [tess] unknown true, 6 events"},
	}
	for i, step := range steps {
		if err := step.do(); err != nil {
			t.Fatal(err)
		}
		if got := state(1); got != step.want {
			t.Errorf("step %d: %s, want %s", i, got, step.want)
		}
	}
	st, _ := s.HoldOf(ctx, repo, 1)
	if st.LiftableBy("tess") || !st.Held {
		t.Error("tess lifts a hold partly of unknown origin as its holder")
	}

	// A database from before the history: pull request 2 held by bob in the old table.
	if _, err := q.DB().ExecContext(ctx, "INSERT INTO holds (repo, pr, login, at) VALUES (?,?,?,?)", repo, 2, "bob", 1); err != nil {
		t.Fatal(err)
	}
	for range 2 { // each start migrates; the second finds nothing left
		var err error
		if s, err = Open(ctx, q.DB()); err != nil {
			t.Fatal(err)
		}
		if got := state(2); got != "held true by [bob] unknown false, 1 events" {
			t.Errorf("migrated: %s", got)
		}
	}
	if got := state(1); got != steps[len(steps)-1].want {
		t.Errorf("the migration changed a history: %s", got)
	}
}
