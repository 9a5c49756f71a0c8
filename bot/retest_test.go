package bot

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/internal/pgtest"
)

// A commenter's /retest comments are admitted retestLimit times per window; the first over the limit is
// the one answered; a retried job decides its comment the same way; the window slides; other commenters
// and pull requests have limits of their own.
func TestAdmitRetestWindow(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { admitRetestWindow(t, filepath.Join(t.TempDir(), "q.db")) })
	t.Run("postgres", func(t *testing.T) { admitRetestWindow(t, pgtest.Start(t)) })
}

func admitRetestWindow(t *testing.T, db string) {
	ctx := context.Background()
	_, s := testStore(t, db)
	t0 := time.Unix(1_800_000_000, 0)
	admit := func(pr int, login string, comment int64, at time.Time) retestAdmission {
		t.Helper()
		a, err := s.admitRetest(ctx, "octo/catalog", pr, login, comment, at)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	for i := range int64(6) {
		a := admit(1, "alice", 100+i, t0.Add(time.Duration(i)*time.Second))
		if want := i < retestLimit; a.admitted != want || a.reply != (i == retestLimit) {
			t.Errorf("comment %d: admitted %v reply %v, want admitted %v reply %v", i, a.admitted, a.reply, want, i == retestLimit)
		}
		if i == retestLimit && !a.until.Equal(t0.Add(retestWindow)) {
			t.Errorf("until %s, want %s", a.until, t0.Add(retestWindow))
		}
	}
	if a := admit(1, "alice", 100, t0.Add(time.Hour)); !a.admitted {
		t.Errorf("a retried job's first comment is refused: %+v", a)
	}
	if a := admit(1, "Bob", 200, t0.Add(10*time.Second)); !a.admitted {
		t.Errorf("another commenter is refused: %+v", a)
	}
	if a := admit(2, "alice", 300, t0.Add(10*time.Second)); !a.admitted {
		t.Errorf("another pull request is refused: %+v", a)
	}
	// Past the window of the first three, alice is admitted again.
	if a := admit(1, "alice", 400, t0.Add(retestWindow+5*time.Second)); !a.admitted {
		t.Errorf("after the window: %+v", a)
	}
}
