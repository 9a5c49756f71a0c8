package bot

import (
	"context"
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

// Hold event actions, and how a hold or lift came about.
const (
	holdPlaced = "hold"
	holdLifted = "lift"

	viaCommand = "command" // /hold, /unhold
	viaLabel   = "label"   // the label put on or taken off by hand
	viaFound   = "found"   // the label was there when the bot looked, placed by nobody it heard of
)

// holdEvent is one entry of a hold's history; Login is "" for a hold of unknown origin.
type holdEvent struct {
	Action, Login, Via string
	At                 time.Time
}

// holdState is a pull request's hold as its history has it.
type holdState struct {
	// Held: a hold is in force (placed, and not lifted since).
	Held bool
	// Holders placed the hold in force (sorted, lower case); Unknown is set when part of it has no known
	// holder (a label nobody was heard placing).
	Holders []string
	Unknown bool
	History []holdEvent
}

// liftableBy reports whether user lifts the hold as its holder: they alone placed all of it.
func (s holdState) liftableBy(user string) bool {
	return !s.Unknown && approval.MayLiftHold(user, s.Holders, false)
}

// recordHold adds a hold by login ("" unknown) to the history (a lift of an earlier hold by the bot that
// it has not heard of yet no longer exempts anything).
func (s *store) recordHold(ctx context.Context, repo string, pr int, login, via string) error {
	if _, err := s.takeLift(ctx, repo, pr); err != nil {
		return err
	}
	return s.holdEvent(ctx, repo, pr, holdPlaced, login, via)
}

// recordLift adds the lift of the hold in force by login to the history.
func (s *store) recordLift(ctx context.Context, repo string, pr int, login, via string) error {
	return s.holdEvent(ctx, repo, pr, holdLifted, login, via)
}

func (s *store) holdEvent(ctx context.Context, repo string, pr int, action, login, via string) error {
	_, err := s.db.ExecContext(ctx, "INSERT INTO hold_events (repo, pr, action, login, via, at) VALUES (?,?,?,?,?,?)",
		repo, pr, action, strings.ToLower(login), via, time.Now().UnixMilli())
	if err != nil {
		return fmt.Errorf("record the %s of %s#%d by %q: %w", action, repo, pr, login, err)
	}
	return nil
}

// holdOf reads a pull request's hold history and what is in force.
func (s *store) holdOf(ctx context.Context, repo string, pr int) (holdState, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT action, login, via, at FROM hold_events WHERE repo = ? AND pr = ? ORDER BY id", repo, pr)
	if err != nil {
		return holdState{}, fmt.Errorf("read the holds of %s#%d: %w", repo, pr, err)
	}
	defer rows.Close()
	var st holdState
	for rows.Next() {
		var e holdEvent
		var at int64
		if err := rows.Scan(&e.Action, &e.Login, &e.Via, &at); err != nil {
			return holdState{}, fmt.Errorf("read the holds of %s#%d: %w", repo, pr, err)
		}
		e.At = time.UnixMilli(at).UTC()
		st.History = append(st.History, e)
		switch {
		case e.Action == holdLifted:
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

// liftNoted reports whether the bot noted, within liftFresh, that it is removing the hold label itself
// (noteLift), leaving the note for the removal's event (takeLift).
func (s *store) liftNoted(ctx context.Context, repo string, pr int) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM hold_lifts WHERE repo = ? AND pr = ? AND at > ?",
		repo, pr, time.Now().Add(-liftFresh).UnixMilli()).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("read the lift of the hold of %s#%d: %w", repo, pr, err)
	}
	return n > 0, nil
}
