package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/catalogbot/catalogbot/bot/queue"
)

// The App's pull-request jobs (releases, promotions) each record their progress in a table of their own
// (releases, promotions): one row per job, keyed by the repository and the job's own key columns, written
// as each step lands so that a job run again resumes where the last one stopped and never opens a second
// pull request. Both tables have the columns of AppPR; AppPRTable is their one set of statements.

// App pull-request job states (the releases' and the promotions').
const (
	// AppPRPending is a job being worked on, or waiting to retry (its Error says why).
	AppPRPending = "pending"
	// AppPROpened is a job whose pull request is open (or was: merged, closed).
	AppPROpened = "opened"
	// AppPRFailed is a job with no attempt left, or one that cannot be done (its Error says why).
	AppPRFailed = "failed"
)

// appPRProgressDDL are the progress columns every App pull-request job table ends with.
const appPRProgressDDL = `
	branch     TEXT    NOT NULL DEFAULT '',
	commit_sha TEXT    NOT NULL DEFAULT '',
	pr         INTEGER NOT NULL DEFAULT 0,
	attempts   INTEGER NOT NULL DEFAULT 0,
	error      TEXT    NOT NULL DEFAULT '',
	updated_at INTEGER NOT NULL,`

// AppPR is the record of one App pull-request job: the columns every such table has.
type AppPR struct {
	// Repo is the repository (lower case, as recorded), Dir the directory the job is of (a bundle's, a
	// package's), PushSHA the pushed commit it started from, State one of the job states (AppPRPending, ...).
	Repo, Dir, PushSHA, State string
	// Branch and Commit are the job's branch and the commit the App pushed to it; PR its pull request.
	Branch, Commit string
	PR             int
	// Attempts counts the job's attempts; Error says why the last one failed; Updated is when the row
	// was last written.
	Attempts int
	Error    string
	Updated  time.Time
}

// AppPRRecord is a row of one App pull-request job table (Release, Promotion): AppPR and the table's own
// columns.
type AppPRRecord interface {
	// Record is the row's AppPR.
	Record() *AppPR
	// keys are the row's key columns after repo, in the table's order.
	keys() []*string
	// own are the table's own progress columns, in the table's order.
	own() []*string
	// Subject names the row in errors: "release of <dir>".
	Subject() string
}

// AppPRTable is the statements of one App pull-request job table, whose rows are R, in db.
type AppPRTable[R AppPRRecord] struct {
	db   *queue.DB
	name string // the table
	noun string // what a row is, in errors: "release"
	keys []string
	own  []string
	new  func() R

	columns, where string
}

func newAppPRTable[R AppPRRecord](db *queue.DB, name, noun string, keys, own []string, newRow func() R) *AppPRTable[R] {
	t := &AppPRTable[R]{db: db, name: name, noun: noun, keys: keys, own: own, new: newRow}
	t.columns = strings.Join(append(append(append([]string{"repo"}, keys...), "push_sha", "state", "branch", "commit_sha", "pr", "attempts",
		"error", "updated_at"), own...), ", ")
	t.where = "repo = ?"
	for _, k := range keys {
		t.where += " AND " + k + " = ?"
	}
	return t
}

func (t *AppPRTable[R]) scan(row rowScanner) (R, error) {
	r := t.new()
	c := r.Record()
	var at int64
	dest := []any{&c.Repo}
	for _, k := range r.keys() {
		dest = append(dest, k)
	}
	dest = append(dest, &c.PushSHA, &c.State, &c.Branch, &c.Commit, &c.PR, &c.Attempts, &c.Error, &at)
	for _, o := range r.own() {
		dest = append(dest, o)
	}
	if err := row.Scan(dest...); err != nil {
		var zero R
		return zero, err
	}
	c.Updated = time.UnixMilli(at)
	return r, nil
}

// keyArgs are r's key values, its repository first (lower case, as recorded).
func keyArgs(r AppPRRecord) []any {
	args := []any{strings.ToLower(r.Record().Repo)}
	for _, k := range r.keys() {
		args = append(args, *k)
	}
	return args
}

// Start returns the row of r's key, recording r (pending, from its push) when it is new, and counts an
// attempt.
func (t *AppPRTable[R]) Start(ctx context.Context, r R) (R, error) {
	r.Record().Repo = strings.ToLower(r.Record().Repo)
	args := append(keyArgs(r), r.Record().PushSHA, AppPRPending, time.Now().UnixMilli())
	keys := strings.Join(append([]string{"repo"}, t.keys...), ", ")
	_, err := t.db.ExecContext(ctx, `INSERT INTO `+t.name+` (`+keys+`, push_sha, state, attempts, updated_at) VALUES (`+
		strings.Repeat("?,", len(t.keys)+3)+`1,?)
		ON CONFLICT (`+keys+`) DO UPDATE SET attempts = `+t.name+`.attempts + 1, updated_at = excluded.updated_at`, args...)
	if err != nil {
		var zero R
		return zero, fmt.Errorf("record the %s in %s: %w", r.Subject(), r.Record().Repo, err)
	}
	return t.Get(ctx, r)
}

// Get reads the row of r's key.
func (t *AppPRTable[R]) Get(ctx context.Context, r R) (R, error) {
	got, err := t.scan(t.db.QueryRowContext(ctx, "SELECT "+t.columns+" FROM "+t.name+" WHERE "+t.where, keyArgs(r)...))
	if err != nil {
		var zero R
		return zero, fmt.Errorf("read the %s in %s: %w", r.Subject(), r.Record().Repo, err)
	}
	return got, nil
}

// Save writes r's progress (every field but the key and the attempts); Error is recorded cut to
// MaxErrorRunes.
func (t *AppPRTable[R]) Save(ctx context.Context, r R) error {
	c := r.Record()
	set := ""
	var args []any
	for i, o := range r.own() {
		set += t.own[i] + " = ?, "
		args = append(args, *o)
	}
	args = append(append(args, c.State, c.Branch, c.Commit, c.PR, ClipRunes(c.Error, MaxErrorRunes), time.Now().UnixMilli()), keyArgs(r)...)
	_, err := t.db.ExecContext(ctx, "UPDATE "+t.name+" SET "+set+"state = ?, branch = ?, commit_sha = ?, pr = ?, error = ?, updated_at = ?\n\t\tWHERE "+
		t.where, args...)
	if err != nil {
		return fmt.Errorf("record the %s in %s: %w", r.Subject(), c.Repo, err)
	}
	return nil
}

// OfPR is the row whose pull request is pr, or nil: only the App records one, when it opened that pull
// request itself.
func (t *AppPRTable[R]) OfPR(ctx context.Context, repo string, pr int) (R, error) {
	r, err := t.scan(t.db.QueryRowContext(ctx, "SELECT "+t.columns+" FROM "+t.name+" WHERE repo = ? AND pr = ?", strings.ToLower(repo), pr))
	if errors.Is(err, sql.ErrNoRows) {
		var zero R
		return zero, nil
	}
	if err != nil {
		return r, fmt.Errorf("read the %s of %s#%d: %w", t.noun, repo, pr, err)
	}
	return r, nil
}

// Recent are the limit rows most recently worked on, newest first.
func (t *AppPRTable[R]) Recent(ctx context.Context, limit int) ([]R, error) {
	return listRows(ctx, t.db, "list "+t.name, t.scan, "SELECT "+t.columns+" FROM "+t.name+" ORDER BY updated_at DESC LIMIT ?", limit)
}
