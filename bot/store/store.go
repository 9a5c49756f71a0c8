// Package store is the GitHub App's own records, kept in the queue's database next to the jobs: runs
// (one per check, merge group or publish: runs.go), /approve approvals and their withdrawals
// (approvals.go), the hold history and the bot's own lifts of holds (holds.go), /retest comments
// (retests.go), the readiness comment of each pull request, merges, and the App's pull-request jobs
// (releases and promotions: apppr.go). It works the same on both of the queue's backends, SQLite and
// PostgreSQL.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/catalogbot/catalogbot/bot/queue"
)

// Store is the bot's records in one queue database. Statements use `?` placeholders and SQL both SQLite
// and PostgreSQL accept (the queue's DB rebinds them).
type Store struct {
	db *queue.DB
	// releases and promotions are the App pull-request job tables (apppr.go).
	releases   *AppPRTable[*Release]
	promotions *AppPRTable[*Promotion]
}

const storeSchema = `
CREATE TABLE IF NOT EXISTS runs (
	id           INTEGER PRIMARY KEY AUTOINCREMENT,
	job_id       INTEGER NOT NULL,
	kind         TEXT    NOT NULL,
	repo         TEXT    NOT NULL,
	pr           INTEGER NOT NULL DEFAULT 0,
	head_sha     TEXT    NOT NULL,
	base_ref     TEXT    NOT NULL DEFAULT '',
	base_sha     TEXT    NOT NULL DEFAULT '',
	base_tip     TEXT    NOT NULL DEFAULT '',
	status       TEXT    NOT NULL,
	verdict      TEXT    NOT NULL DEFAULT '',
	conclusion   TEXT    NOT NULL DEFAULT '',
	check_run_id INTEGER NOT NULL DEFAULT 0, -- unused: check runs are bot/checkrun's (kept for existing databases)
	approvers    TEXT    NOT NULL DEFAULT '[]',
	settings     TEXT    NOT NULL DEFAULT '{}',
	report       TEXT    NOT NULL DEFAULT '',
	log          TEXT    NOT NULL DEFAULT '',
	started_at   INTEGER NOT NULL,
	finished_at  INTEGER NOT NULL DEFAULT 0,
	UNIQUE (job_id, kind, pr)
);
CREATE INDEX IF NOT EXISTS runs_pr ON runs(repo, pr, id);
CREATE TABLE IF NOT EXISTS head_approvals (
	repo TEXT NOT NULL, pr INTEGER NOT NULL, login TEXT NOT NULL, head_sha TEXT NOT NULL, at INTEGER NOT NULL,
	PRIMARY KEY (repo, pr, login, head_sha)
);
CREATE TABLE IF NOT EXISTS approval_cancels (
	repo TEXT NOT NULL, pr INTEGER NOT NULL, login TEXT NOT NULL, at INTEGER NOT NULL,
	PRIMARY KEY (repo, pr, login)
);
CREATE TABLE IF NOT EXISTS hold_lifts (
	repo TEXT NOT NULL, pr INTEGER NOT NULL, at INTEGER NOT NULL,
	PRIMARY KEY (repo, pr)
);
-- holds: who held, before the hold history (hold_events) replaced it: read once by its migration
CREATE TABLE IF NOT EXISTS holds (
	repo TEXT NOT NULL, pr INTEGER NOT NULL, login TEXT NOT NULL, at INTEGER NOT NULL,
	PRIMARY KEY (repo, pr, login)
);
CREATE TABLE IF NOT EXISTS readiness_comments (
	repo TEXT NOT NULL, pr INTEGER NOT NULL, comment_id INTEGER NOT NULL, body TEXT NOT NULL,
	PRIMARY KEY (repo, pr)
);
CREATE TABLE IF NOT EXISTS merges (
	repo TEXT NOT NULL, pr INTEGER NOT NULL, head_sha TEXT NOT NULL, merge_sha TEXT NOT NULL, at INTEGER NOT NULL,
	PRIMARY KEY (repo, pr)
);
`

// Open creates the store's tables in db where they are missing (and carries the holders recorded before the
// hold history into it: holds.go), and returns the store.
func Open(ctx context.Context, db *queue.DB) (*Store, error) {
	if err := db.CreateTables(ctx, "the bot's tables", storeSchema+retestSchema); err != nil {
		return nil, err
	}
	if err := db.CreateTables(ctx, "the hold history", holdSchema); err != nil {
		return nil, err
	}
	if err := db.CreateTables(ctx, "the releases", releaseSchema); err != nil {
		return nil, err
	}
	if err := db.CreateTables(ctx, "the promotions", promotionSchema); err != nil {
		return nil, err
	}
	return &Store{db: db, releases: newReleaseTable(db), promotions: newPromotionTable(db)}, nil
}

// ReadinessComment returns the recorded readiness comment of a pull request: its id and body (0 when none).
func (s *Store) ReadinessComment(ctx context.Context, repo string, pr int) (int64, string, error) {
	var id int64
	var body string
	err := s.db.QueryRowContext(ctx, "SELECT comment_id, body FROM readiness_comments WHERE repo = ? AND pr = ?", repo, pr).Scan(&id, &body)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, "", nil
	}
	return id, body, err
}

// SetReadinessComment records id and body as the readiness comment of a pull request.
func (s *Store) SetReadinessComment(ctx context.Context, repo string, pr int, id int64, body string) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO readiness_comments (repo, pr, comment_id, body) VALUES (?,?,?,?)
		ON CONFLICT (repo, pr) DO UPDATE SET comment_id = excluded.comment_id, body = excluded.body`, repo, pr, id, body)
	return err
}

// Merged returns the merge commit recorded for a pull request ("" when none).
func (s *Store) Merged(ctx context.Context, repo string, pr int) (string, error) {
	var sha string
	err := s.db.QueryRowContext(ctx, "SELECT merge_sha FROM merges WHERE repo = ? AND pr = ?", repo, pr).Scan(&sha)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return sha, err
}

// RecordMerge records that the bot merged a pull request's head as mergeSHA; a merge recorded already stays.
func (s *Store) RecordMerge(ctx context.Context, repo string, pr int, head, mergeSHA string) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO merges (repo, pr, head_sha, merge_sha, at) VALUES (?,?,?,?,?) ON CONFLICT DO NOTHING`,
		repo, pr, head, mergeSHA, time.Now().UnixMilli())
	return err
}

// rowScanner is a *sql.Row or *sql.Rows.
type rowScanner interface{ Scan(...any) error }

// listRows runs query and scans each row it returns with scan; what names the query in errors ("list runs").
func listRows[T any](ctx context.Context, db *queue.DB, what string, scan func(rowScanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		r, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
