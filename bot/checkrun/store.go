package checkrun

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// row is a run's check run as the table holds it.
type row struct {
	head          string
	state         State
	attempt       int
	id            int64
	started       bool  // a create was sent (it may have reached GitHub whatever its answer)
	creatingUntil int64 // unix ms: a create is in flight until then, by whoever set it
	conclusion    string
	title         string
	summary       string
}

func (o *Owner) get(ctx context.Context, run int64) (*row, error) {
	var r row
	var started int
	err := o.db.QueryRowContext(ctx, `SELECT head_sha, state, attempt, check_run_id, create_started, creating_until, conclusion, title, summary
		FROM check_runs WHERE run_id = ?`, run).Scan(&r.head, &r.state, &r.attempt, &r.id, &started, &r.creatingUntil, &r.conclusion, &r.title, &r.summary)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the check run of run %d: %w", run, err)
	}
	r.started = started == 1
	return &r, nil
}

// record records the check run id created under the create lease until, and returns the run as it is
// then (a settle may have come while the create was in flight); nil when the lease was no longer until.
func (o *Owner) record(ctx context.Context, run, id, until int64) (*row, error) {
	var r row
	err := o.db.QueryRowContext(ctx, `UPDATE check_runs SET check_run_id = ?, creating_until = 0
		WHERE run_id = ? AND check_run_id = 0 AND creating_until = ? RETURNING state, conclusion, title, summary`, id, run, until).Scan(
		&r.state, &r.conclusion, &r.title, &r.summary)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("record check run %d of run %d: %w", id, run, err)
	}
	r.id = id
	return &r, nil
}

// exec runs a compare-and-set statement: true when it changed the row.
func (o *Owner) exec(ctx context.Context, what string, run int64, query string, args ...any) (bool, error) {
	res, err := o.db.ExecContext(ctx, query, args...)
	if err != nil {
		return false, fmt.Errorf("%s of run %d: %w", what, run, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("%s of run %d: %w", what, run, err)
	}
	return n == 1, nil
}

// insert records a run's check run in state with a create lease until until (0: none); false when the
// run has one already.
func (o *Owner) insert(ctx context.Context, ref Ref, state State, until int64) (bool, error) {
	return o.exec(ctx, "record the check run", ref.Run, `INSERT INTO check_runs (run_id, head_sha, state, attempt, creating_until)
		VALUES (?,?,?,?,?) ON CONFLICT (run_id) DO NOTHING`, ref.Run, ref.HeadSHA, string(state), ref.Attempt, until)
}

// move is the state transition: from one of from to to, and only while the row is at most attempt's
// (attempt -1: any). It records the settled output, if any.
func (o *Owner) move(ctx context.Context, ref Ref, from []State, to State, attempt int, concl, title, summary string) (bool, error) {
	args := []any{string(to), concl, title, summary, ref.Run}
	marks := make([]string, len(from))
	for i, s := range from {
		marks[i] = "?"
		args = append(args, string(s))
	}
	q := `UPDATE check_runs SET state = ?, conclusion = ?, title = ?, summary = ? WHERE run_id = ? AND state IN (` + strings.Join(marks, ",") + ")"
	if attempt >= 0 {
		// The attempt takes the run (a retry takes it from its predecessor); an older attempt cannot.
		q = strings.Replace(q, "SET state = ?,", "SET state = ?, attempt = ?,", 1)
		args = append([]any{args[0], attempt}, args[1:]...)
		q += " AND attempt <= ?"
		args = append(args, attempt)
	}
	return o.exec(ctx, "move the check run to "+string(to), ref.Run, q, args...)
}

// held moves only while attempt holds the run in state s.
func (o *Owner) held(ctx context.Context, ref Ref, s, to State, concl, title, summary string) (bool, error) {
	return o.exec(ctx, "move the check run to "+string(to), ref.Run, `UPDATE check_runs SET state = ?, conclusion = ?, title = ?, summary = ?
		WHERE run_id = ? AND state = ? AND attempt = ?`, string(to), concl, title, summary, ref.Run, string(s), ref.Attempt)
}

// restart points a run's check run at a new head (the job's pull request moved: its announced check run
// was settled, or an earlier attempt checked the old head): a new check run, in progress for attempt.
func (o *Owner) restart(ctx context.Context, ref Ref, oldHead string) (bool, error) {
	return o.exec(ctx, "point the check run at "+ref.HeadSHA, ref.Run, `UPDATE check_runs SET head_sha = ?, state = ?, attempt = ?,
		check_run_id = 0, create_started = 0, creating_until = 0 WHERE run_id = ? AND head_sha = ? AND attempt <= ?`,
		ref.HeadSHA, string(InProgress), ref.Attempt, ref.Run, oldHead, ref.Attempt)
}

func now() int64 { return time.Now().UnixMilli() }
