package store

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
// retestLimit and retestWindow are the bot's bounds.
const (
	retestLimit  = 3
	retestWindow = 10 * time.Minute
)

func TestAdmitRetestWindow(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { admitRetestWindow(t, filepath.Join(t.TempDir(), "q.db")) })
	t.Run("postgres", func(t *testing.T) { admitRetestWindow(t, pgtest.Start(t)) })
}

func admitRetestWindow(t *testing.T, db string) {
	ctx := context.Background()
	_, s := testStore(t, db)
	t0 := time.Unix(1_800_000_000, 0)
	admit := func(pr int, login string, comment int64, at time.Time) RetestAdmission {
		t.Helper()
		a, err := s.AdmitRetest(ctx, RetestComment{Repo: "octo/catalog", PR: pr, Login: login, Comment: comment, At: at},
			RetestLimit{Max: retestLimit, Window: retestWindow})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	for i := range int64(6) {
		a := admit(1, "alice", 100+i, t0.Add(time.Duration(i)*time.Second))
		if want := i < retestLimit; a.Admitted != want || a.Reply != (i == retestLimit) {
			t.Errorf("comment %d: admitted %v reply %v, want admitted %v reply %v", i, a.Admitted, a.Reply, want, i == retestLimit)
		}
		if i == retestLimit && !a.Until.Equal(t0.Add(retestWindow)) {
			t.Errorf("until %s, want %s", a.Until, t0.Add(retestWindow))
		}
	}
	if a := admit(1, "alice", 100, t0.Add(time.Hour)); !a.Admitted {
		t.Errorf("a retried job's first comment is refused: %+v", a)
	}
	if a := admit(1, "Bob", 200, t0.Add(10*time.Second)); !a.Admitted {
		t.Errorf("another commenter is refused: %+v", a)
	}
	if a := admit(2, "alice", 300, t0.Add(10*time.Second)); !a.Admitted {
		t.Errorf("another pull request is refused: %+v", a)
	}
	// Past the window of the first three, alice is admitted again.
	if a := admit(1, "alice", 400, t0.Add(retestWindow+5*time.Second)); !a.Admitted {
		t.Errorf("after the window: %+v", a)
	}
}
