package bot

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// releaseSchema is the App's releases of merged bundle directories: one row per repository and bundle
// directory, written as each step of the release job lands, so a release job run again (a redelivered
// push, a restart, a retry) resumes where the last one stopped and never opens a second pull request.
const releaseSchema = `
CREATE TABLE IF NOT EXISTS releases (
	repo       TEXT    NOT NULL,
	dir        TEXT    NOT NULL,
	push_sha   TEXT    NOT NULL,
	state      TEXT    NOT NULL,
	image      TEXT    NOT NULL DEFAULT '',
	branch     TEXT    NOT NULL DEFAULT '',
	commit_sha TEXT    NOT NULL DEFAULT '',
	pr         INTEGER NOT NULL DEFAULT 0,
	attempts   INTEGER NOT NULL DEFAULT 0,
	error      TEXT    NOT NULL DEFAULT '',
	updated_at INTEGER NOT NULL,
	PRIMARY KEY (repo, dir)
);
CREATE INDEX IF NOT EXISTS releases_pr ON releases(repo, pr);
`

// Release states.
const (
	releasePending = "pending" // being released, or waiting to retry (error says why)
	releaseOpened  = "opened"  // its pull request is open (or was: merged, closed)
	releaseFailed  = "failed"  // no attempt is left, or it cannot be released (error says why)
)

// releaseRow is one bundle directory's release.
type releaseRow struct {
	Repo, Dir, PushSHA, State string
	// Image is the bundle image by digest, once pushed.
	Image string
	// Branch and Commit are the release branch and the commit the App pushed to it; PR its pull request.
	Branch, Commit string
	PR             int
	Attempts       int
	Error          string
	Updated        time.Time
}

const releaseColumns = "repo, dir, push_sha, state, image, branch, commit_sha, pr, attempts, error, updated_at"

func scanRelease(row rowScanner) (*releaseRow, error) {
	var r releaseRow
	var at int64
	if err := row.Scan(&r.Repo, &r.Dir, &r.PushSHA, &r.State, &r.Image, &r.Branch, &r.Commit, &r.PR, &r.Attempts, &r.Error, &at); err != nil {
		return nil, err
	}
	r.Updated = time.UnixMilli(at)
	return &r, nil
}

// startRelease returns the release of dir, recording it (pending, from push) when it is new, and counts an
// attempt.
func (s *store) startRelease(ctx context.Context, repo, dir, push string) (*releaseRow, error) {
	repo = strings.ToLower(repo)
	_, err := s.db.ExecContext(ctx, `INSERT INTO releases (repo, dir, push_sha, state, attempts, updated_at) VALUES (?,?,?,?,1,?)
		ON CONFLICT (repo, dir) DO UPDATE SET attempts = releases.attempts + 1, updated_at = excluded.updated_at`,
		repo, dir, push, releasePending, time.Now().UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("record the release of %s in %s: %w", dir, repo, err)
	}
	return s.release(ctx, repo, dir)
}

func (s *store) release(ctx context.Context, repo, dir string) (*releaseRow, error) {
	r, err := scanRelease(s.db.QueryRowContext(ctx, "SELECT "+releaseColumns+" FROM releases WHERE repo = ? AND dir = ?",
		strings.ToLower(repo), dir))
	if err != nil {
		return nil, fmt.Errorf("read the release of %s in %s: %w", dir, repo, err)
	}
	return r, nil
}

// saveRelease writes r's progress (every field but the key and the attempts).
func (s *store) saveRelease(ctx context.Context, r *releaseRow) error {
	_, err := s.db.ExecContext(ctx, `UPDATE releases SET state = ?, image = ?, branch = ?, commit_sha = ?, pr = ?, error = ?, updated_at = ?
		WHERE repo = ? AND dir = ?`, r.State, r.Image, r.Branch, r.Commit, r.PR, clipRunes(r.Error, maxErrorRunes), time.Now().UnixMilli(),
		strings.ToLower(r.Repo), r.Dir)
	if err != nil {
		return fmt.Errorf("record the release of %s in %s: %w", r.Dir, r.Repo, err)
	}
	return nil
}

// releaseOfPR is the release whose pull request is pr, or nil: only the App records one, when it opened
// that pull request itself.
func (s *store) releaseOfPR(ctx context.Context, repo string, pr int) (*releaseRow, error) {
	r, err := optionalRow(s.db.QueryRowContext(ctx, "SELECT "+releaseColumns+" FROM releases WHERE repo = ? AND pr = ?",
		strings.ToLower(repo), pr), scanRelease)
	if err != nil {
		return nil, fmt.Errorf("read the release of %s#%d: %w", repo, pr, err)
	}
	return r, nil
}

// recentReleases are the releases most recently worked on, newest first.
func (s *store) recentReleases(ctx context.Context, limit int) ([]*releaseRow, error) {
	return listRows(ctx, s, "releases", scanRelease, "SELECT "+releaseColumns+" FROM releases ORDER BY updated_at DESC LIMIT ?", limit)
}

// rowScanner is a *sql.Row or *sql.Rows.
type rowScanner interface{ Scan(...any) error }

// optionalRow is row scanned with scan, or nil when there is none.
func optionalRow[T any](row rowScanner, scan func(rowScanner) (*T, error)) (*T, error) {
	r, err := scan(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return r, err
}

// listRows runs query and scans each row it returns with scan; what names the rows in errors.
func listRows[T any](ctx context.Context, s *store, what string, scan func(rowScanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", what, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		r, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", what, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
