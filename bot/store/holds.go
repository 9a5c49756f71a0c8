package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/catalogbot/catalogbot/checks/approval"
)

// holdSchema is the history of every pull request's holds: each hold and each lift, who and when, kept
// across close and reopen (the label is only its mirror). The holders the bot recorded before the history
// existed (the holds table, rows of holds then in force) become its first events, once.
const holdSchema = `
CREATE TABLE IF NOT EXISTS hold_events (
	id     INTEGER PRIMARY KEY AUTOINCREMENT,
	repo   TEXT    NOT NULL,
	pr     INTEGER NOT NULL,
	action TEXT    NOT NULL,
	login  TEXT    NOT NULL,
	via    TEXT    NOT NULL,
	at     INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS hold_events_pr ON hold_events(repo, pr, id);
INSERT INTO hold_events (repo, pr, action, login, via, at)
	SELECT repo, pr, 'hold', login, 'recorded', at FROM holds
	WHERE NOT EXISTS (SELECT 1 FROM hold_events e WHERE e.repo = holds.repo AND e.pr = holds.pr);
DELETE FROM holds;
`

// Hold event actions.
const (
	// HoldPlaced is the action of a hold.
	HoldPlaced = "hold"
	// HoldLifted is the action of a lift.
	HoldLifted = "lift"
)

// How a hold or lift came about.
const (
	// ViaCommand is a /hold or /unhold.
	ViaCommand = "command"
	// ViaLabel is the label put on or taken off by hand.
	ViaLabel = "label"
	// ViaFound is a label that was there when the bot looked, placed by nobody it heard of.
	ViaFound = "found"
)

// HoldEvent is one entry of a hold's history: its action (HoldPlaced, HoldLifted), by whom (Login, lower
// case; "" for a hold of unknown origin), how (ViaCommand, ...) and when.
type HoldEvent struct {
	Action, Login, Via string
	At                 time.Time
}

// HoldState is a pull request's hold as its history has it.
type HoldState struct {
	// Held: a hold is in force (placed, and not lifted since).
	Held bool
	// Holders placed the hold in force (sorted, lower case); Unknown is set when part of it has no known
	// holder (a label nobody was heard placing).
	Holders []string
	Unknown bool
	// History is every hold and lift, oldest first.
	History []HoldEvent
}

// LiftableBy reports whether user lifts the hold as its holder: they alone placed all of it.
func (s HoldState) LiftableBy(user string) bool {
	return !s.Unknown && approval.MayLiftHold(user, s.Holders, false)
}

// RecordHold adds a hold by login ("" unknown) to the history (a lift of an earlier hold by the bot that
// it has not heard of yet no longer exempts anything).
func (s *Store) RecordHold(ctx context.Context, repo string, pr int, login, via string) error {
	if _, err := s.TakeLift(ctx, repo, pr); err != nil {
		return err
	}
	return s.holdEvent(ctx, repo, pr, HoldPlaced, login, via)
}

// RecordLift adds the lift of the hold in force by login to the history.
func (s *Store) RecordLift(ctx context.Context, repo string, pr int, login, via string) error {
	return s.holdEvent(ctx, repo, pr, HoldLifted, login, via)
}

func (s *Store) holdEvent(ctx context.Context, repo string, pr int, action, login, via string) error {
	_, err := s.db.ExecContext(ctx, "INSERT INTO hold_events (repo, pr, action, login, via, at) VALUES (?,?,?,?,?,?)",
		repo, pr, action, strings.ToLower(login), via, time.Now().UnixMilli())
	if err != nil {
		return fmt.Errorf("record the %s of %s#%d by %q: %w", action, repo, pr, login, err)
	}
	return nil
}

// HoldOf reads a pull request's hold history and what is in force.
func (s *Store) HoldOf(ctx context.Context, repo string, pr int) (HoldState, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT action, login, via, at FROM hold_events WHERE repo = ? AND pr = ? ORDER BY id", repo, pr)
	if err != nil {
		return HoldState{}, fmt.Errorf("read the holds of %s#%d: %w", repo, pr, err)
	}
	defer rows.Close()
	var st HoldState
	for rows.Next() {
		var e HoldEvent
		var at int64
		if err := rows.Scan(&e.Action, &e.Login, &e.Via, &at); err != nil {
			return HoldState{}, fmt.Errorf("read the holds of %s#%d: %w", repo, pr, err)
		}
		e.At = time.UnixMilli(at).UTC()
		st.History = append(st.History, e)
		switch {
		case e.Action == HoldLifted:
			st.Held, st.Holders, st.Unknown = false, nil, false
		case e.Login == "":
			st.Held, st.Unknown = true, true
		default:
			st.Held = true
			if !slices.Contains(st.Holders, e.Login) {
				st.Holders = append(st.Holders, e.Login)
			}
		}
	}
	slices.Sort(st.Holders)
	return st, rows.Err()
}

// LiftNoted reports whether the bot noted, within the last ten minutes (liftFresh), that it is removing the hold label itself
// (NoteLift), leaving the note for the removal's event (TakeLift).
func (s *Store) LiftNoted(ctx context.Context, repo string, pr int) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM hold_lifts WHERE repo = ? AND pr = ? AND at > ?",
		repo, pr, time.Now().Add(-liftFresh).UnixMilli()).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("read the lift of the hold of %s#%d: %w", repo, pr, err)
	}
	return n > 0, nil
}

// NoteLift records that the bot itself is about to remove the hold label (an accepted /unhold): the
// label's removal it then hears of is its own.
func (s *Store) NoteLift(ctx context.Context, repo string, pr int) error {
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

// TakeLift reports whether the bot lifted the hold of a pull request itself within liftFresh, forgetting
// the note either way.
func (s *Store) TakeLift(ctx context.Context, repo string, pr int) (bool, error) {
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
