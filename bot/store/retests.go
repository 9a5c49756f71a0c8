package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

const retestSchema = `
CREATE TABLE IF NOT EXISTS retests (
	repo TEXT NOT NULL, pr INTEGER NOT NULL, login TEXT NOT NULL, comment_id INTEGER NOT NULL, at INTEGER NOT NULL,
	PRIMARY KEY (repo, pr, comment_id)
);
`

// RetestComment is one /retest comment: its pull request, its author, its ID and when it was handled.
type RetestComment struct {
	// Repo and PR are the pull request commented on.
	Repo string
	PR   int
	// Login is the commenter; Comment is the comment's ID.
	Login   string
	Comment int64
	// At is when the comment was handled (a retried job's comment keeps the time first recorded).
	At time.Time
}

// RetestLimit bounds each commenter's /retest comments on a pull request: at most Max per Window.
type RetestLimit struct {
	// Max is how many comments of a commenter on a pull request are admitted in any Window.
	Max    int
	Window time.Duration
}

// RetestAdmission is what AdmitRetest decided for one /retest comment.
type RetestAdmission struct {
	// Admitted is set when the comment is within the limit.
	Admitted bool
	// Reply is set on the first comment over the limit in the window (the one refusal that is answered).
	Reply bool
	// Until is when the oldest /retest of the window leaves it.
	Until time.Time
}

// AdmitRetest records the /retest comment c (idempotent for a retried job) and decides it: the
// commenter's comments in the last lim.Window, ordered by time then comment ID, are admitted up to
// lim.Max. Concurrent jobs agree because each counts only the comments ordered before its own.
func (s *Store) AdmitRetest(ctx context.Context, c RetestComment, lim RetestLimit) (RetestAdmission, error) {
	repo, pr, login, comment := c.Repo, c.PR, strings.ToLower(c.Login), c.Comment
	if _, err := s.db.ExecContext(ctx, `INSERT INTO retests (repo, pr, login, comment_id, at) VALUES (?,?,?,?,?) ON CONFLICT DO NOTHING`,
		repo, pr, login, comment, c.At.UnixMilli()); err != nil {
		return RetestAdmission{}, fmt.Errorf("record the /retest of %s#%d by %s: %w", repo, pr, login, err)
	}
	var at int64
	if err := s.db.QueryRowContext(ctx, `SELECT at FROM retests WHERE repo = ? AND pr = ? AND comment_id = ?`, repo, pr, comment).Scan(&at); err != nil {
		return RetestAdmission{}, fmt.Errorf("read the /retest of %s#%d by %s: %w", repo, pr, login, err)
	}
	since := at - lim.Window.Milliseconds()
	var before int
	var oldest *int64
	if err := s.db.QueryRowContext(ctx, `SELECT count(*), min(at) FROM retests WHERE repo = ? AND pr = ? AND login = ? AND at > ?
		AND (at < ? OR (at = ? AND comment_id < ?))`, repo, pr, login, since, at, at, comment).Scan(&before, &oldest); err != nil {
		return RetestAdmission{}, fmt.Errorf("count the /retest comments of %s#%d by %s: %w", repo, pr, login, err)
	}
	a := RetestAdmission{Admitted: before < lim.Max, Reply: before == lim.Max}
	if oldest != nil {
		a.Until = time.UnixMilli(*oldest).Add(lim.Window)
	}
	// Rows older than any window are of no use.
	if _, err := s.db.ExecContext(ctx, `DELETE FROM retests WHERE repo = ? AND pr = ? AND at < ?`, repo, pr, since-lim.Window.Milliseconds()); err != nil {
		return RetestAdmission{}, fmt.Errorf("forget old /retest comments of %s#%d: %w", repo, pr, err)
	}
	return a, nil
}
