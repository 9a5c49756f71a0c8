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

// runQueued is the status of a run announced at enqueue time whose job has not started it yet.
const runQueued = "queued"

// claimRun records the run of (job, kind, pr) as queued and returns its ID, unless a run of it exists
// already: then claimed is false and nothing changes. It runs in tx, the job's enqueue (one statement:
// every delivery pays for it).
func (s *store) claimRun(ctx context.Context, tx *queue.Tx, jobID int64, kind, repo string, pr int, head string) (id int64, claimed bool, err error) {
	err = tx.QueryRowContext(ctx, `INSERT INTO runs (job_id, kind, repo, pr, head_sha, status, started_at)
		VALUES (?,?,?,?,?,?,?) ON CONFLICT (job_id, kind, pr) DO NOTHING RETURNING id`,
		jobID, kind, repo, pr, head, runQueued, time.Now().UnixMilli()).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("announce run of job %d: %w", jobID, err)
	}
	return id, true, nil
}

// runsOfJobs lists the runs of jobs in status.
func (s *store) runsOfJobs(ctx context.Context, jobs []int64, status string) ([]*run, error) {
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

// markRun moves a run from one status to another with a conclusion and a log line; false when the run was
// not in status from (someone else settled it).
func (s *store) markRun(ctx context.Context, runID int64, from, to, conclusion, why string) (bool, error) {
	line := time.Now().UTC().Format("15:04:05.000") + " " + conclusion + ": " + why + "\n"
	res, err := s.db.ExecContext(ctx, `UPDATE runs SET status = ?, conclusion = ?, log = log || ?, finished_at = ?
		WHERE id = ? AND status = ?`, to, conclusion, line, time.Now().UnixMilli(), runID, from)
	if err != nil {
		return false, fmt.Errorf("settle run %d: %w", runID, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// runOf is the run of (job, kind, pr), or nil.
func (s *store) runOf(ctx context.Context, jobID int64, kind string, pr int) (*run, error) {
	r, err := scanRun(s.db.QueryRowContext(ctx, "SELECT "+runColumns+" FROM runs WHERE job_id = ? AND kind = ? AND pr = ?", jobID, kind, pr))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return r, err
}
