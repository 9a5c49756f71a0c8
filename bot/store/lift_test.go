package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// TestAttackStaleLiftNoteExemptsNoOne: the bot notes an accepted /unhold before removing the hold label,
// and the removal it then hears of is exempt as its own. A note whose removal never came (the removal
// failed) must not exempt a later removal of a new hold: only a fresh note counts, and only for an app's
// removal (bot/hold.go); a person's removal is always weighed by who may lift the hold.
func TestAttackStaleLiftNoteExemptsNoOne(t *testing.T) {
	ctx := context.Background()
	q, s := testStore(t, filepath.Join(t.TempDir(), "q.db"))
	if err := s.NoteLift(ctx, "octo/catalog", 7); err != nil {
		t.Fatal(err)
	}
	if own, err := s.TakeLift(ctx, "octo/catalog", 7); err != nil || !own {
		t.Fatalf("a fresh note: own %v, %v; want the bot's own removal", own, err)
	}
	if own, _ := s.TakeLift(ctx, "octo/catalog", 7); own {
		t.Fatal("a note exempted two removals")
	}
	stale := time.Now().Add(-liftFresh - time.Minute).UnixMilli()
	if _, err := q.DB().ExecContext(ctx, "INSERT INTO hold_lifts (repo, pr, at) VALUES (?,?,?)", "octo/catalog", 7, stale); err != nil {
		t.Fatal(err)
	}
	if own, err := s.TakeLift(ctx, "octo/catalog", 7); err != nil || own {
		t.Fatalf("a stale note: own %v, %v; want no exemption", own, err)
	}
}
