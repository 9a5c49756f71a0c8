package bot

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// A flood of /retest on a pull request is bounded twice: a /retest never stops the running check (it
// queues one re-check, which a later /retest supersedes: at most one running and one queued check per
// pull request), and each commenter's /retest comments on a pull request are admitted at most
// retestLimit times per retestWindow; the first one over the limit is answered with one reply, the
// rest with nothing.
const (
	retestLimit  = 3
	retestWindow = 10 * time.Minute
)

const retestSchema = `
CREATE TABLE IF NOT EXISTS retests (
	repo TEXT NOT NULL, pr INTEGER NOT NULL, login TEXT NOT NULL, comment_id INTEGER NOT NULL, at INTEGER NOT NULL,
	PRIMARY KEY (repo, pr, comment_id)
);
`

// retestAdmission is what admitRetest decided for one /retest comment.
type retestAdmission struct {
	admitted bool
	// reply is set on the first comment over the limit in the window (the one refusal that is answered).
	reply bool
	// until is when the oldest /retest of the window leaves it.
	until time.Time
}

// admitRetest records login's /retest comment on repo#pr (idempotent for a retried job) and decides it: the
// commenter's comments in the last retestWindow, ordered by time then comment ID, are admitted up to
// retestLimit. Concurrent jobs agree because each counts only the comments ordered before its own.
func (s *store) admitRetest(ctx context.Context, repo string, pr int, login string, comment int64, now time.Time) (retestAdmission, error) {
	login = strings.ToLower(login)
	if _, err := s.db.ExecContext(ctx, `INSERT INTO retests (repo, pr, login, comment_id, at) VALUES (?,?,?,?,?) ON CONFLICT DO NOTHING`,
		repo, pr, login, comment, now.UnixMilli()); err != nil {
		return retestAdmission{}, fmt.Errorf("record the /retest of %s#%d by %s: %w", repo, pr, login, err)
	}
	var at int64
	if err := s.db.QueryRowContext(ctx, `SELECT at FROM retests WHERE repo = ? AND pr = ? AND comment_id = ?`, repo, pr, comment).Scan(&at); err != nil {
		return retestAdmission{}, fmt.Errorf("read the /retest of %s#%d by %s: %w", repo, pr, login, err)
	}
	since := at - retestWindow.Milliseconds()
	var before int
	var oldest *int64
	if err := s.db.QueryRowContext(ctx, `SELECT count(*), min(at) FROM retests WHERE repo = ? AND pr = ? AND login = ? AND at > ?
		AND (at < ? OR (at = ? AND comment_id < ?))`, repo, pr, login, since, at, at, comment).Scan(&before, &oldest); err != nil {
		return retestAdmission{}, fmt.Errorf("count the /retest comments of %s#%d by %s: %w", repo, pr, login, err)
	}
	a := retestAdmission{admitted: before < retestLimit, reply: before == retestLimit}
	if oldest != nil {
		a.until = time.UnixMilli(*oldest).Add(retestWindow)
	}
	// Rows older than any window are of no use.
	if _, err := s.db.ExecContext(ctx, `DELETE FROM retests WHERE repo = ? AND pr = ? AND at < ?`, repo, pr, since-retestWindow.Milliseconds()); err != nil {
		return retestAdmission{}, fmt.Errorf("forget old /retest comments of %s#%d: %w", repo, pr, err)
	}
	return a, nil
}

// retestRefusal is the one reply to a commenter over the limit.
func retestRefusal(user string, a retestAdmission) string {
	return fmt.Sprintf("`/retest`: @%s asked for %d re-checks of this pull request in the last %s already; further `/retest` comments are ignored until %s UTC",
		user, retestLimit, retestWindow, a.until.UTC().Format("15:04"))
}
