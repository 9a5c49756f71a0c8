package store

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

// Run statuses.
const (
	// RunQueued is the status of a run announced at enqueue time whose job has not started it yet.
	RunQueued = "queued"
	// RunRunning is the status of a run its job started.
	RunRunning = "running"
	// RunCompleted is the status of a run that ended with a conclusion.
	RunCompleted = "completed"
	// RunCancelled is the status of a run stopped before it ended (superseded, closed, shut down).
	RunCancelled = "cancelled"
)

// KindCheck is the kind of the runs that check a pull request's head: the ones LatestCheck and HeadSeen
// read.
const KindCheck = "check"

// Settings are the base branch's merge rules, recorded with each check (from the tip it used).
type Settings struct {
	// CatalogDir is catalog.dir, MergeMethod merge.method; RequiredLabels and RequiredApprovals are
	// merge.requiredLabels and the number of approvals merging needs.
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
	// release.autoMerge, changing only its templates and catalogs (bot's releaseGrant).
	Release string `json:"release,omitempty"`
	// Promotion names the package when the check was of the App's own promotion of it (strategy always)
	// under promotion.autoMerge, changing only its ci.yaml and new catalog (bot's promotionGrant).
	Promotion string `json:"promotion,omitempty"`
	// ReviewNeeded names the package when the check was of the App's own promotion of a package whose
	// strategy is review-needed: a maintainer must approve it (bot's promotionGrant).
	ReviewNeeded string `json:"review_needed,omitempty"`
}

// Run is one recorded execution of a job: a check, a merge group's check or a publish.
type Run struct {
	// ID numbers the run; JobID is its job's in the queue.
	ID, JobID int64
	// Kind is the job's kind (KindCheck, ...), Repo its repository, PR its pull request (0: none).
	Kind, Repo string
	PR         int
	// HeadSHA is the commit checked or published; BaseRef, BaseSHA and Tip are the base branch, its commit
	// the head was compared with, and its tip the check ran against.
	HeadSHA, BaseRef, BaseSHA, Tip string
	// Status is one of the run statuses (RunQueued, ...); Verdict and Conclusion are its report's verdict
	// and its check run's conclusion; Log is what it logged.
	Status, Verdict, Conclusion, Log string
	// Approvers are the approvals the check counted, Settings the base branch's rules it recorded.
	Approvers []string
	Settings  Settings
	// Report is the run's report, nil before it has one.
	Report *report.Report
	// Started and Finished are when it started and ended (zero while it runs).
	Started, Finished time.Time
}

const runColumns = `id, job_id, kind, repo, pr, head_sha, base_ref, base_sha, base_tip, status, verdict, conclusion,
	approvers, settings, report, log, started_at, finished_at`

func scanRun(row rowScanner) (*Run, error) {
	var r Run
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

// StartRun returns the run of (job, kind, pr), creating it; a retried job gets its earlier run back (and
// with it the check run it created: checkrun.Owner.Start). A run of another head is moved to this one.
func (s *Store) StartRun(ctx context.Context, jobID int64, kind, repo string, pr int, head string) (*Run, error) {
	now := time.Now().UnixMilli()
	// Update first: an upsert that conflicts still uses up an ID of the runs' sequence.
	res, err := s.db.ExecContext(ctx, `UPDATE runs SET status = ?, started_at = ?, head_sha = ?
		WHERE job_id = ? AND kind = ? AND pr = ?`, RunRunning, now, head, jobID, kind, pr)
	if err != nil {
		return nil, fmt.Errorf("record run of job %d: %w", jobID, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 1 {
		return s.RunOf(ctx, jobID, kind, pr)
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO runs (job_id, kind, repo, pr, head_sha, status, started_at) VALUES (?,?,?,?,?,?,?)
		ON CONFLICT (job_id, kind, pr) DO UPDATE SET status = excluded.status, started_at = excluded.started_at,
			head_sha = excluded.head_sha`,
		jobID, kind, repo, pr, head, RunRunning, now)
	if err != nil {
		return nil, fmt.Errorf("record run of job %d: %w", jobID, err)
	}
	return scanRun(s.db.QueryRowContext(ctx, "SELECT "+runColumns+" FROM runs WHERE job_id = ? AND kind = ? AND pr = ?", jobID, kind, pr))
}

// AppendLog appends line to the log of run runID.
func (s *Store) AppendLog(ctx context.Context, runID int64, line string) error {
	_, err := s.db.ExecContext(ctx, "UPDATE runs SET log = log || ? WHERE id = ?", line, runID)
	return err
}

// FinishRun records a run's outcome: its status, verdict, conclusion, base, approvers, settings and report.
func (s *Store) FinishRun(ctx context.Context, r *Run) error {
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

// RunByID is the run numbered id, or nil.
func (s *Store) RunByID(ctx context.Context, id int64) (*Run, error) {
	r, err := scanRun(s.db.QueryRowContext(ctx, "SELECT "+runColumns+" FROM runs WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return r, err
}

// LatestCheck is the newest completed check of a pull request's head against the base branch baseRef,
// or nil: a check against another base (the pull request was retargeted since) does not count.
func (s *Store) LatestCheck(ctx context.Context, repo string, pr int, head, baseRef string) (*Run, error) {
	r, err := scanRun(s.db.QueryRowContext(ctx, "SELECT "+runColumns+` FROM runs
		WHERE repo = ? AND pr = ? AND kind = ? AND head_sha = ? AND base_ref = ? AND status = ? ORDER BY finished_at DESC, id DESC LIMIT 1`,
		repo, pr, KindCheck, head, baseRef, RunCompleted))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return r, err
}

// RecentRuns are the limit newest runs, newest first.
func (s *Store) RecentRuns(ctx context.Context, limit int) ([]*Run, error) {
	return s.queryRuns(ctx, "list runs", "SELECT "+runColumns+" FROM runs ORDER BY id DESC LIMIT ?", limit)
}

// queryRuns runs a query of runColumns; what names it in errors.
func (s *Store) queryRuns(ctx context.Context, what, query string, args ...any) ([]*Run, error) {
	return listRows(ctx, s.db, what, scanRun, query, args...)
}

// HeadSeen is when the bot first recorded a check of head on the pull request (ok false: never).
func (s *Store) HeadSeen(ctx context.Context, repo string, pr int, head string) (at time.Time, ok bool, err error) {
	var ms sql.NullInt64
	err = s.db.QueryRowContext(ctx, "SELECT MIN(started_at) FROM runs WHERE repo = ? AND pr = ? AND kind = ? AND head_sha = ?",
		repo, pr, KindCheck, head).Scan(&ms)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("read the checks of %s#%d at %s: %w", repo, pr, head[:min(len(head), 12)], err)
	}
	if !ms.Valid {
		return time.Time{}, false, nil
	}
	return time.UnixMilli(ms.Int64), true, nil
}

// ClaimRun records the run of (job, kind, pr) as queued and returns its ID, unless a run of it exists
// already: then claimed is false and nothing changes. It runs in tx, the job's enqueue (one statement:
// every delivery pays for it).
func (s *Store) ClaimRun(ctx context.Context, tx *queue.Tx, jobID int64, kind, repo string, pr int, head string) (id int64, claimed bool, err error) {
	err = tx.QueryRowContext(ctx, `INSERT INTO runs (job_id, kind, repo, pr, head_sha, status, started_at)
		VALUES (?,?,?,?,?,?,?) ON CONFLICT (job_id, kind, pr) DO NOTHING RETURNING id`,
		jobID, kind, repo, pr, head, RunQueued, time.Now().UnixMilli()).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("announce run of job %d: %w", jobID, err)
	}
	return id, true, nil
}

// RunsOfJobs lists the runs of jobs in status.
func (s *Store) RunsOfJobs(ctx context.Context, jobs []int64, status string) ([]*Run, error) {
	if len(jobs) == 0 {
		return nil, nil
	}
	args := []any{status}
	for _, j := range jobs {
		args = append(args, j)
	}
	marks := strings.TrimSuffix(strings.Repeat("?,", len(jobs)), ",")
	return s.queryRuns(ctx, fmt.Sprintf("list runs of jobs %v", jobs),
		"SELECT "+runColumns+" FROM runs WHERE status = ? AND job_id IN ("+marks+") ORDER BY id", args...)
}

// MarkRun moves a run from one status to another with a conclusion and a log line; false when the run was
// not in status from (someone else settled it).
func (s *Store) MarkRun(ctx context.Context, runID int64, from, to, conclusion, why string) (bool, error) {
	line := time.Now().UTC().Format("15:04:05.000") + " " + conclusion + ": " + why + "\n"
	res, err := s.db.ExecContext(ctx, `UPDATE runs SET status = ?, conclusion = ?, log = log || ?, finished_at = ?
		WHERE id = ? AND status = ?`, to, conclusion, line, time.Now().UnixMilli(), runID, from)
	if err != nil {
		return false, fmt.Errorf("settle run %d: %w", runID, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// RunOf is the run of (job, kind, pr), or nil.
func (s *Store) RunOf(ctx context.Context, jobID int64, kind string, pr int) (*Run, error) {
	r, err := scanRun(s.db.QueryRowContext(ctx, "SELECT "+runColumns+" FROM runs WHERE job_id = ? AND kind = ? AND pr = ?", jobID, kind, pr))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return r, err
}
