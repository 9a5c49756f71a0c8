package queue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Depth counts jobs by state.
func (q *Queue) Depth(ctx context.Context) (map[State]int, error) {
	rows, err := q.db.QueryContext(ctx, "SELECT state, count(*) FROM jobs GROUP BY state")
	if err != nil {
		return nil, fmt.Errorf("count jobs: %w", err)
	}
	defer rows.Close()
	out := map[State]int{}
	for _, s := range States {
		out[s] = 0
	}
	for rows.Next() {
		var s State
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			return nil, err
		}
		out[s] = n
	}
	return out, rows.Err()
}

// Get returns one job.
func (q *Queue) Get(ctx context.Context, id int64) (*Job, error) {
	j, err := scanJob(q.db.QueryRowContext(ctx, "SELECT "+jobColumns+" FROM jobs WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("job %d does not exist", id)
	}
	if err != nil {
		return nil, fmt.Errorf("read job %d: %w", id, err)
	}
	return j, nil
}

// List returns up to limit jobs in the given states (all states when none), newest first.
func (q *Queue) List(ctx context.Context, limit int, states ...State) ([]*Job, error) {
	query := "SELECT " + jobColumns + " FROM jobs"
	var args []any
	if len(states) > 0 {
		query += " WHERE state IN (?" + repeat(",?", len(states)-1) + ")"
		for _, s := range states {
			args = append(args, s)
		}
	}
	query += " ORDER BY id DESC LIMIT ?"
	args = append(args, limit)
	rows, err := q.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	defer rows.Close()
	var out []*Job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

func repeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}

// Prune deletes finished jobs (done, failed, superseded) that finished before cutoff. Their deliveries
// are forgotten: a redelivery after that would run again.
func (q *Queue) Prune(ctx context.Context, cutoff time.Time) (int64, error) {
	res, err := q.db.ExecContext(ctx, "DELETE FROM jobs WHERE state IN (?,?,?) AND finished_at < ?", Done, Failed, Superseded, ms(cutoff))
	if err != nil {
		return 0, fmt.Errorf("prune jobs: %w", err)
	}
	return res.RowsAffected()
}

// Pending counts the queued and running jobs with a supersede key.
func (q *Queue) Pending(ctx context.Context, key string) (int, error) {
	var n int
	err := q.db.QueryRowContext(ctx, "SELECT count(*) FROM jobs WHERE supersede_key = ? AND state IN (?, ?)", key, Queued, Running).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count pending jobs of %s: %w", key, err)
	}
	return n, nil
}
