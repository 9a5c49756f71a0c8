package bot

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
// pull request. Both tables have the columns of appPR; appPRTable is their one set of statements.

// App pull-request job states (the releases' and the promotions').
const (
	releasePending = "pending" // being worked on, or waiting to retry (error says why)
	releaseOpened  = "opened"  // its pull request is open (or was: merged, closed)
	releaseFailed  = "failed"  // no attempt is left, or it cannot be done (error says why)
)

// appPRProgressDDL are the progress columns every App pull-request job table ends with.
const appPRProgressDDL = `
	branch     TEXT    NOT NULL DEFAULT '',
	commit_sha TEXT    NOT NULL DEFAULT '',
	pr         INTEGER NOT NULL DEFAULT 0,
	attempts   INTEGER NOT NULL DEFAULT 0,
	error      TEXT    NOT NULL DEFAULT '',
	updated_at INTEGER NOT NULL,`

// appPR is the record of one App pull-request job: the columns every such table has.
type appPR struct {
	Repo, Dir, PushSHA, State string
	// Branch and Commit are the job's branch and the commit the App pushed to it; PR its pull request.
	Branch, Commit string
	PR             int
	Attempts       int
	Error          string
	Updated        time.Time
}

// appPRRecord is a row of one App pull-request job table: appPR and the table's own columns.
type appPRRecord interface {
	record() *appPR
	// keys are the row's key columns after repo, in the table's order.
	keys() []*string
	// own are the table's own progress columns, in the table's order.
	own() []*string
	// subject names the row in errors: "release of <dir>".
	subject() string
}

// appPRTable is the statements of one App pull-request job table, whose rows are R, in db.
type appPRTable[R appPRRecord] struct {
	db   *queue.DB
	name string // the table
	noun string // what a row is, in errors: "release"
	keys []string
	own  []string
	new  func() R

	columns, where string
}

func newAppPRTable[R appPRRecord](db *queue.DB, name, noun string, keys, own []string, newRow func() R) *appPRTable[R] {
	t := &appPRTable[R]{db: db, name: name, noun: noun, keys: keys, own: own, new: newRow}
	t.columns = strings.Join(append(append(append([]string{"repo"}, keys...), "push_sha", "state", "branch", "commit_sha", "pr", "attempts",
		"error", "updated_at"), own...), ", ")
	t.where = "repo = ?"
	for _, k := range keys {
		t.where += " AND " + k + " = ?"
	}
	return t
}

func (t *appPRTable[R]) scan(row rowScanner) (R, error) {
	r := t.new()
	c := r.record()
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
func keyArgs(r appPRRecord) []any {
	args := []any{strings.ToLower(r.record().Repo)}
	for _, k := range r.keys() {
		args = append(args, *k)
	}
	return args
}

// start returns the row of r's key, recording r (pending, from its push) when it is new, and counts an
// attempt.
func (t *appPRTable[R]) start(ctx context.Context, r R) (R, error) {
	r.record().Repo = strings.ToLower(r.record().Repo)
	args := append(keyArgs(r), r.record().PushSHA, releasePending, time.Now().UnixMilli())
	keys := strings.Join(append([]string{"repo"}, t.keys...), ", ")
	_, err := t.db.ExecContext(ctx, `INSERT INTO `+t.name+` (`+keys+`, push_sha, state, attempts, updated_at) VALUES (`+
		strings.Repeat("?,", len(t.keys)+3)+`1,?)
		ON CONFLICT (`+keys+`) DO UPDATE SET attempts = `+t.name+`.attempts + 1, updated_at = excluded.updated_at`, args...)
	if err != nil {
		var zero R
		return zero, fmt.Errorf("record the %s in %s: %w", r.subject(), r.record().Repo, err)
	}
	return t.get(ctx, r)
}

// get reads the row of r's key.
func (t *appPRTable[R]) get(ctx context.Context, r R) (R, error) {
	got, err := t.scan(t.db.QueryRowContext(ctx, "SELECT "+t.columns+" FROM "+t.name+" WHERE "+t.where, keyArgs(r)...))
	if err != nil {
		var zero R
		return zero, fmt.Errorf("read the %s in %s: %w", r.subject(), r.record().Repo, err)
	}
	return got, nil
}

// save writes r's progress (every field but the key and the attempts).
func (t *appPRTable[R]) save(ctx context.Context, r R) error {
	c := r.record()
	set := ""
	var args []any
	for i, o := range r.own() {
		set += t.own[i] + " = ?, "
		args = append(args, *o)
	}
	args = append(append(args, c.State, c.Branch, c.Commit, c.PR, clipRunes(c.Error, maxErrorRunes), time.Now().UnixMilli()), keyArgs(r)...)
	_, err := t.db.ExecContext(ctx, "UPDATE "+t.name+" SET "+set+"state = ?, branch = ?, commit_sha = ?, pr = ?, error = ?, updated_at = ?\n\t\tWHERE "+
		t.where, args...)
	if err != nil {
		return fmt.Errorf("record the %s in %s: %w", r.subject(), c.Repo, err)
	}
	return nil
}

// ofPR is the row whose pull request is pr, or nil: only the App records one, when it opened that pull
// request itself.
func (t *appPRTable[R]) ofPR(ctx context.Context, repo string, pr int) (R, error) {
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

// recent are the rows most recently worked on, newest first.
func (t *appPRTable[R]) recent(ctx context.Context, limit int) ([]R, error) {
	return listRows(ctx, t.db, "list "+t.name, t.scan, "SELECT "+t.columns+" FROM "+t.name+" ORDER BY updated_at DESC LIMIT ?", limit)
}
