package bot

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// promotionSchema is the App's promotions of packages into a catalog a push added to the configuration:
// one row per repository, catalog and package directory, written as each step of the promotion job
// lands (as the releases table), so a job run again resumes where the last one stopped and never opens
// a second pull request. The states are the releases' (releasePending, releaseOpened, releaseFailed).
const promotionSchema = `
CREATE TABLE IF NOT EXISTS promotions (
	repo       TEXT    NOT NULL,
	catalog    TEXT    NOT NULL,
	dir        TEXT    NOT NULL,
	push_sha   TEXT    NOT NULL,
	strategy   TEXT    NOT NULL DEFAULT '',
	state      TEXT    NOT NULL,
	branch     TEXT    NOT NULL DEFAULT '',
	commit_sha TEXT    NOT NULL DEFAULT '',
	pr         INTEGER NOT NULL DEFAULT 0,
	attempts   INTEGER NOT NULL DEFAULT 0,
	error      TEXT    NOT NULL DEFAULT '',
	updated_at INTEGER NOT NULL,
	PRIMARY KEY (repo, catalog, dir)
);
CREATE INDEX IF NOT EXISTS promotions_pr ON promotions(repo, pr);
`

// promotionRow is one package's promotion into one catalog.
type promotionRow struct {
	Repo, Catalog, Dir, PushSHA string
	// Strategy is the package's fbc.version_promotion_strategy at the push's commit, once computed.
	Strategy, State string
	// Branch and Commit are the promotion branch and the commit the App pushed to it; PR its pull request.
	Branch, Commit string
	PR             int
	Attempts       int
	Error          string
	Updated        time.Time
}

const promotionColumns = "repo, catalog, dir, push_sha, strategy, state, branch, commit_sha, pr, attempts, error, updated_at"

func scanPromotion(row rowScanner) (*promotionRow, error) {
	var r promotionRow
	var at int64
	if err := row.Scan(&r.Repo, &r.Catalog, &r.Dir, &r.PushSHA, &r.Strategy, &r.State, &r.Branch, &r.Commit, &r.PR, &r.Attempts, &r.Error, &at); err != nil {
		return nil, err
	}
	r.Updated = time.UnixMilli(at)
	return &r, nil
}

// startPromotion returns the promotion of dir into catalog, recording it (pending, from push) when it is
// new, and counts an attempt.
func (s *store) startPromotion(ctx context.Context, repo, catalog, dir, push string) (*promotionRow, error) {
	repo = strings.ToLower(repo)
	_, err := s.db.ExecContext(ctx, `INSERT INTO promotions (repo, catalog, dir, push_sha, state, attempts, updated_at) VALUES (?,?,?,?,?,1,?)
		ON CONFLICT (repo, catalog, dir) DO UPDATE SET attempts = promotions.attempts + 1, updated_at = excluded.updated_at`,
		repo, catalog, dir, push, releasePending, time.Now().UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("record the promotion of %s into %s in %s: %w", dir, catalog, repo, err)
	}
	return s.promotion(ctx, repo, catalog, dir)
}

func (s *store) promotion(ctx context.Context, repo, catalog, dir string) (*promotionRow, error) {
	r, err := scanPromotion(s.db.QueryRowContext(ctx, "SELECT "+promotionColumns+" FROM promotions WHERE repo = ? AND catalog = ? AND dir = ?",
		strings.ToLower(repo), catalog, dir))
	if err != nil {
		return nil, fmt.Errorf("read the promotion of %s into %s in %s: %w", dir, catalog, repo, err)
	}
	return r, nil
}

// savePromotion writes r's progress (every field but the key and the attempts).
func (s *store) savePromotion(ctx context.Context, r *promotionRow) error {
	_, err := s.db.ExecContext(ctx, `UPDATE promotions SET strategy = ?, state = ?, branch = ?, commit_sha = ?, pr = ?, error = ?, updated_at = ?
		WHERE repo = ? AND catalog = ? AND dir = ?`, r.Strategy, r.State, r.Branch, r.Commit, r.PR, clipRunes(r.Error, maxErrorRunes),
		time.Now().UnixMilli(), strings.ToLower(r.Repo), r.Catalog, r.Dir)
	if err != nil {
		return fmt.Errorf("record the promotion of %s into %s in %s: %w", r.Dir, r.Catalog, r.Repo, err)
	}
	return nil
}

// promotionOfPR is the promotion whose pull request is pr, or nil: only the App records one, when it
// opened that pull request itself.
func (s *store) promotionOfPR(ctx context.Context, repo string, pr int) (*promotionRow, error) {
	r, err := optionalRow(s.db.QueryRowContext(ctx, "SELECT "+promotionColumns+" FROM promotions WHERE repo = ? AND pr = ?",
		strings.ToLower(repo), pr), scanPromotion)
	if err != nil {
		return nil, fmt.Errorf("read the promotion of %s#%d: %w", repo, pr, err)
	}
	return r, nil
}

// recentPromotions are the promotions most recently worked on, newest first.
func (s *store) recentPromotions(ctx context.Context, limit int) ([]*promotionRow, error) {
	return listRows(ctx, s, "promotions", scanPromotion, "SELECT "+promotionColumns+" FROM promotions ORDER BY updated_at DESC LIMIT ?", limit)
}
