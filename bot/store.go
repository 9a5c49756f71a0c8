package bot

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/catalogbot/catalogbot/bot/queue"
	"github.com/catalogbot/catalogbot/checks/approval"
	"github.com/catalogbot/catalogbot/report"
)

// store keeps the bot's own records next to the queue: runs (one per check, merge group or publish),
// /approve approvals and their withdrawals, the bot's own lifts of holds (the hold history: store_holds.go), the readiness comment of each pull request, and merges. Statements use `?`
// placeholders and SQL both SQLite and PostgreSQL accept (the queue's DB rebinds them).
type store struct {
	db *queue.DB
	// releases and promotions are the App pull-request job tables (store_apppr.go).
	releases   *appPRTable[*releaseRow]
	promotions *appPRTable[*promotionRow]
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

func newStore(ctx context.Context, db *queue.DB) (*store, error) {
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
	return &store{db: db, releases: newReleaseTable(db), promotions: newPromotionTable(db)}, nil
}

// Run statuses.
const (
	runRunning   = "running"
	runCompleted = "completed"
	runCancelled = "cancelled"
)

// settings are the base branch's merge rules, recorded with each check (from the tip it used).
type settings struct {
	CatalogDir        string   `json:"catalog_dir"`
	MergeMethod       string   `json:"merge_method"`
	RequiredLabels    []string `json:"required_labels,omitempty"`
	RequiredApprovals int      `json:"required_approvals,omitempty"`
	// ConfigError says why the base branch's configuration could not be loaded: merging is blocked.
	ConfigError string `json:"config_error,omitempty"`
	// Policy says who may approve the change; nil for checks recorded before it was (nothing counts).
	Policy *approval.Policy `json:"policy,omitempty"`
	// Checked is the merge commit of the head into the base branch's tip (the run's Tip) that the stages
	// ran on: what GitHub lands while the tip and the head stay those ("" when they conflict).
	Checked string `json:"checked,omitempty"`
	// Release names the package when the check was of the App's own release pull request of it under
	// release.autoMerge, changing only its templates and catalogs (releaseGrant).
	Release string `json:"release,omitempty"`
	// Promotion names the package when the check was of the App's own promotion of it (strategy always)
	// under promotion.autoMerge, changing only its ci.yaml and new catalog (promotionGrant).
	Promotion string `json:"promotion,omitempty"`
	// ReviewNeeded names the package when the check was of the App's own promotion of a package whose
	// strategy is review-needed: a maintainer must approve it (promotionGrant).
	ReviewNeeded string `json:"review_needed,omitempty"`
}

// run is one recorded execution.
type run struct {
	ID, JobID                        int64
	Kind, Repo                       string
	PR                               int
	HeadSHA, BaseRef, BaseSHA, Tip   string
	Status, Verdict, Conclusion, Log string
	CheckRunID                       int64 // for the run page (bot/checkrun holds it)
	Approvers                        []string
	Settings                         settings
	Report                           *report.Report
	Started, Finished                time.Time
}

const runColumns = `id, job_id, kind, repo, pr, head_sha, base_ref, base_sha, base_tip, status, verdict, conclusion,
	approvers, settings, report, log, started_at, finished_at`

func scanRun(row rowScanner) (*run, error) {
	var r run
	var approvers, sets, rep string
	var started, finished int64
	if err := row.Scan(&r.ID, &r.JobID, &r.Kind, &r.Repo, &r.PR, &r.HeadSHA, &r.BaseRef, &r.BaseSHA, &r.Tip, &r.Status, &r.Verdict,
		&r.Conclusion, &approvers, &sets, &rep, &r.Log, &started, &finished); err != nil {
		return nil, err
	}
	_ = json.Unmarshal([]byte(approvers), &r.Approvers)
	_ = json.Unmarshal([]byte(sets), &r.Settings)
	if rep != "" {
		r.Report = &report.Report{}
		if err := json.Unmarshal([]byte(rep), r.Report); err != nil {
			return nil, fmt.Errorf("run %d: stored report: %w", r.ID, err)
		}
	}
	r.Started = time.UnixMilli(started)
	if finished > 0 {
		r.Finished = time.UnixMilli(finished)
	}
	return &r, nil
}

// startRun returns the run of (job, kind, pr), creating it; a retried job gets its earlier run back (and
// with it the check run it created: checkrun.Owner.Start). A run of another head is moved to this one.
func (s *store) startRun(ctx context.Context, jobID int64, kind, repo string, pr int, head string) (*run, error) {
	now := time.Now().UnixMilli()
	// Update first: an upsert that conflicts still uses up an ID of the runs' sequence.
	res, err := s.db.ExecContext(ctx, `UPDATE runs SET status = ?, started_at = ?, head_sha = ?
		WHERE job_id = ? AND kind = ? AND pr = ?`, runRunning, now, head, jobID, kind, pr)
	if err != nil {
		return nil, fmt.Errorf("record run of job %d: %w", jobID, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 1 {
		return s.runOf(ctx, jobID, kind, pr)
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO runs (job_id, kind, repo, pr, head_sha, status, started_at) VALUES (?,?,?,?,?,?,?)
		ON CONFLICT (job_id, kind, pr) DO UPDATE SET status = excluded.status, started_at = excluded.started_at,
			head_sha = excluded.head_sha`,
		jobID, kind, repo, pr, head, runRunning, now)
	if err != nil {
		return nil, fmt.Errorf("record run of job %d: %w", jobID, err)
	}
	return scanRun(s.db.QueryRowContext(ctx, "SELECT "+runColumns+" FROM runs WHERE job_id = ? AND kind = ? AND pr = ?", jobID, kind, pr))
}

func (s *store) appendLog(ctx context.Context, runID int64, line string) error {
	_, err := s.db.ExecContext(ctx, "UPDATE runs SET log = log || ? WHERE id = ?", line, runID)
	return err
}

// finishRun records a run's outcome.
func (s *store) finishRun(ctx context.Context, r *run) error {
	approvers, _ := json.Marshal(r.Approvers)
	sets, _ := json.Marshal(r.Settings)
	var rep []byte
	if r.Report != nil {
		var err error
		if rep, err = json.Marshal(r.Report); err != nil {
			return fmt.Errorf("run %d: encode report: %w", r.ID, err)
		}
	}
	_, err := s.db.ExecContext(ctx, `UPDATE runs SET status = ?, verdict = ?, conclusion = ?, base_ref = ?, base_sha = ?, base_tip = ?,
		approvers = ?, settings = ?, report = ?, finished_at = ? WHERE id = ?`,
		r.Status, r.Verdict, r.Conclusion, r.BaseRef, r.BaseSHA, r.Tip, string(approvers), string(sets), string(rep), time.Now().UnixMilli(), r.ID)
	if err != nil {
		return fmt.Errorf("record outcome of run %d: %w", r.ID, err)
	}
	return nil
}

func (s *store) getRun(ctx context.Context, id int64) (*run, error) {
	r, err := scanRun(s.db.QueryRowContext(ctx, "SELECT "+runColumns+" FROM runs WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return r, err
}

// latestCheck is the newest completed check of a pull request's head against the base branch baseRef,
// or nil: a check against another base (the pull request was retargeted since) does not count.
func (s *store) latestCheck(ctx context.Context, repo string, pr int, head, baseRef string) (*run, error) {
	r, err := scanRun(s.db.QueryRowContext(ctx, "SELECT "+runColumns+` FROM runs
		WHERE repo = ? AND pr = ? AND kind = ? AND head_sha = ? AND base_ref = ? AND status = ? ORDER BY finished_at DESC, id DESC LIMIT 1`,
		repo, pr, kindCheck, head, baseRef, runCompleted))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return r, err
}

func (s *store) recentRuns(ctx context.Context, limit int) ([]*run, error) {
	return s.queryRuns(ctx, "list runs", "SELECT "+runColumns+" FROM runs ORDER BY id DESC LIMIT ?", limit)
}

// queryRuns runs a query of runColumns; what names it in errors.
func (s *store) queryRuns(ctx context.Context, what, query string, args ...any) ([]*run, error) {
	return listRows(ctx, s.db, what, scanRun, query, args...)
}

// addApproval records an /approve by login on the pull request's head: it counts for that head only (and
// ends login's /approve cancel).
func (s *store) addApproval(ctx context.Context, repo string, pr int, login, head string) error {
	if err := s.reapproved(ctx, repo, pr, login); err != nil {
		return err
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO head_approvals (repo, pr, login, head_sha, at) VALUES (?,?,?,?,?) ON CONFLICT DO NOTHING`,
		repo, pr, strings.ToLower(login), head, time.Now().UnixMilli())
	if err != nil {
		return fmt.Errorf("record the approval of %s#%d by %s: %w", repo, pr, login, err)
	}
	return nil
}

// cancelApproval records an /approve cancel by login: none of login's approvals (reviews or /approve)
// count until login approves again.
func (s *store) cancelApproval(ctx context.Context, repo string, pr int, login string) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO approval_cancels (repo, pr, login, at) VALUES (?,?,?,?) ON CONFLICT DO NOTHING`,
		repo, pr, strings.ToLower(login), time.Now().UnixMilli())
	if err != nil {
		return fmt.Errorf("record the withdrawal of %s's approval of %s#%d: %w", login, repo, pr, err)
	}
	return nil
}

// reapproved forgets login's /approve cancel: login approved again (a review or /approve after it).
func (s *store) reapproved(ctx context.Context, repo string, pr int, login string) error {
	if _, err := s.db.ExecContext(ctx, "DELETE FROM approval_cancels WHERE repo = ? AND pr = ? AND login = ?", repo, pr, strings.ToLower(login)); err != nil {
		return fmt.Errorf("record the approval of %s#%d by %s: %w", repo, pr, login, err)
	}
	return nil
}

// withdrawApprovals forgets login's /approve commands: a later review of login's requested changes or
// was dismissed.
func (s *store) withdrawApprovals(ctx context.Context, repo string, pr int, login string) error {
	if _, err := s.db.ExecContext(ctx, "DELETE FROM head_approvals WHERE repo = ? AND pr = ? AND login = ?", repo, pr, strings.ToLower(login)); err != nil {
		return fmt.Errorf("withdraw the approvals of %s#%d by %s: %w", repo, pr, login, err)
	}
	return nil
}

// cancelled are the logins whose /approve cancel stands (sorted).
func (s *store) cancelled(ctx context.Context, repo string, pr int) ([]string, error) {
	return listRows(ctx, s.db, fmt.Sprintf("read the withdrawn approvals of %s#%d", repo, pr), func(row rowScanner) (l string, err error) {
		return l, row.Scan(&l)
	}, "SELECT login FROM approval_cancels WHERE repo = ? AND pr = ? ORDER BY login", repo, pr)
}

// approvals are the /approve commands of a pull request with the head each was given on, oldest first.
func (s *store) approvals(ctx context.Context, repo string, pr int) ([]approval.Slash, error) {
	return listRows(ctx, s.db, fmt.Sprintf("read approvals of %s#%d", repo, pr), func(row rowScanner) (a approval.Slash, err error) {
		return a, row.Scan(&a.User, &a.HeadSHA)
	}, "SELECT login, head_sha FROM head_approvals WHERE repo = ? AND pr = ? ORDER BY at, login", repo, pr)
}

// headSeen is when the bot first recorded a check of head on the pull request (ok false: never).
func (s *store) headSeen(ctx context.Context, repo string, pr int, head string) (at time.Time, ok bool, err error) {
	var ms sql.NullInt64
	err = s.db.QueryRowContext(ctx, "SELECT MIN(started_at) FROM runs WHERE repo = ? AND pr = ? AND kind = ? AND head_sha = ?",
		repo, pr, kindCheck, head).Scan(&ms)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("read the checks of %s#%d at %s: %w", repo, pr, short(head), err)
	}
	if !ms.Valid {
		return time.Time{}, false, nil
	}
	return time.UnixMilli(ms.Int64), true, nil
}

// noteLift records that the bot itself is about to remove the hold label (an accepted /unhold): the
// label's removal it then hears of is its own.
func (s *store) noteLift(ctx context.Context, repo string, pr int) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO hold_lifts (repo, pr, at) VALUES (?,?,?) ON CONFLICT (repo, pr) DO UPDATE SET at = excluded.at`,
		repo, pr, time.Now().UnixMilli())
	if err != nil {
		return fmt.Errorf("record the lift of the hold of %s#%d: %w", repo, pr, err)
	}
	return nil
}

// liftFresh is how long a noted lift stands for the bot's own label removal: a note whose removal never
// came (the removal failed) must not later exempt someone else's.
const liftFresh = 10 * time.Minute

// takeLift reports whether the bot lifted the hold of a pull request itself within liftFresh, forgetting
// the note either way.
func (s *store) takeLift(ctx context.Context, repo string, pr int) (bool, error) {
	var at int64
	err := s.db.QueryRowContext(ctx, "SELECT at FROM hold_lifts WHERE repo = ? AND pr = ?", repo, pr).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read the lift of the hold of %s#%d: %w", repo, pr, err)
	}
	res, err := s.db.ExecContext(ctx, "DELETE FROM hold_lifts WHERE repo = ? AND pr = ? AND at = ?", repo, pr, at)
	if err != nil {
		return false, fmt.Errorf("read the lift of the hold of %s#%d: %w", repo, pr, err)
	}
	n, err := res.RowsAffected()
	return n > 0 && time.Since(time.UnixMilli(at)) < liftFresh, err
}

// readinessComment returns the recorded comment id and body (0 when none).
func (s *store) readinessComment(ctx context.Context, repo string, pr int) (int64, string, error) {
	var id int64
	var body string
	err := s.db.QueryRowContext(ctx, "SELECT comment_id, body FROM readiness_comments WHERE repo = ? AND pr = ?", repo, pr).Scan(&id, &body)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, "", nil
	}
	return id, body, err
}

func (s *store) setReadinessComment(ctx context.Context, repo string, pr int, id int64, body string) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO readiness_comments (repo, pr, comment_id, body) VALUES (?,?,?,?)
		ON CONFLICT (repo, pr) DO UPDATE SET comment_id = excluded.comment_id, body = excluded.body`, repo, pr, id, body)
	return err
}

// merged returns the recorded merge of a pull request ("" when none).
func (s *store) merged(ctx context.Context, repo string, pr int) (string, error) {
	var sha string
	err := s.db.QueryRowContext(ctx, "SELECT merge_sha FROM merges WHERE repo = ? AND pr = ?", repo, pr).Scan(&sha)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return sha, err
}

func (s *store) recordMerge(ctx context.Context, repo string, pr int, head, mergeSHA string) error {
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
