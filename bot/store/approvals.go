package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/catalogbot/catalogbot/checks/approval"
)

// AddApproval records an /approve by login on the pull request's head: it counts for that head only (and
// ends login's /approve cancel).
func (s *Store) AddApproval(ctx context.Context, repo string, pr int, login, head string) error {
	if err := s.Reapproved(ctx, repo, pr, login); err != nil {
		return err
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO head_approvals (repo, pr, login, head_sha, at) VALUES (?,?,?,?,?) ON CONFLICT DO NOTHING`,
		repo, pr, strings.ToLower(login), head, time.Now().UnixMilli())
	if err != nil {
		return fmt.Errorf("record the approval of %s#%d by %s: %w", repo, pr, login, err)
	}
	return nil
}

// CancelApproval records an /approve cancel by login: none of login's approvals (reviews or /approve)
// count until login approves again.
func (s *Store) CancelApproval(ctx context.Context, repo string, pr int, login string) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO approval_cancels (repo, pr, login, at) VALUES (?,?,?,?) ON CONFLICT DO NOTHING`,
		repo, pr, strings.ToLower(login), time.Now().UnixMilli())
	if err != nil {
		return fmt.Errorf("record the withdrawal of %s's approval of %s#%d: %w", login, repo, pr, err)
	}
	return nil
}

// Reapproved forgets login's /approve cancel: login approved again (a review or /approve after it).
func (s *Store) Reapproved(ctx context.Context, repo string, pr int, login string) error {
	if _, err := s.db.ExecContext(ctx, "DELETE FROM approval_cancels WHERE repo = ? AND pr = ? AND login = ?", repo, pr, strings.ToLower(login)); err != nil {
		return fmt.Errorf("record the approval of %s#%d by %s: %w", repo, pr, login, err)
	}
	return nil
}

// WithdrawApprovals forgets login's /approve commands: a later review of login's requested changes or
// was dismissed.
func (s *Store) WithdrawApprovals(ctx context.Context, repo string, pr int, login string) error {
	if _, err := s.db.ExecContext(ctx, "DELETE FROM head_approvals WHERE repo = ? AND pr = ? AND login = ?", repo, pr, strings.ToLower(login)); err != nil {
		return fmt.Errorf("withdraw the approvals of %s#%d by %s: %w", repo, pr, login, err)
	}
	return nil
}

// CancelledApprovals are the logins whose /approve cancel stands (sorted).
func (s *Store) CancelledApprovals(ctx context.Context, repo string, pr int) ([]string, error) {
	return listRows(ctx, s.db, fmt.Sprintf("read the withdrawn approvals of %s#%d", repo, pr), func(row rowScanner) (l string, err error) {
		return l, row.Scan(&l)
	}, "SELECT login FROM approval_cancels WHERE repo = ? AND pr = ? ORDER BY login", repo, pr)
}

// Approvals are the /approve commands of a pull request with the head each was given on, oldest first.
func (s *Store) Approvals(ctx context.Context, repo string, pr int) ([]approval.Slash, error) {
	return listRows(ctx, s.db, fmt.Sprintf("read approvals of %s#%d", repo, pr), func(row rowScanner) (a approval.Slash, err error) {
		return a, row.Scan(&a.User, &a.HeadSHA)
	}, "SELECT login, head_sha FROM head_approvals WHERE repo = ? AND pr = ? ORDER BY at, login", repo, pr)
}
