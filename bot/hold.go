package bot

import (
	"context"
	"fmt"
	"strings"

	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/bot/store"
	"github.com/catalogbot/catalogbot/checks/approval"
	"github.com/catalogbot/catalogbot/checks/merge"
	"github.com/catalogbot/catalogbot/report"
)

// holdOf is the hold of an open pull request when deciding: the label change being handled weighed into
// the history (noteHoldLabel), then the history read, and the label made its mirror (syncHold).
func (jc *jobCtx) holdOf(ctx context.Context, t PullRequestTask, pr *ghclient.PullRequest) (store.HoldState, error) {
	if err := jc.noteHoldLabel(ctx, t, pr); err != nil {
		return store.HoldState{}, err
	}
	return jc.syncHold(ctx, pr)
}

// syncHold reads the hold history and makes the label its mirror: a label nobody was heard placing is
// recorded as a hold of unknown origin, and a hold in force whose label is gone (taken off while the
// pull request was closed, when labels decide nothing) gets it back.
func (jc *jobCtx) syncHold(ctx context.Context, pr *ghclient.PullRequest) (store.HoldState, error) {
	st := jc.b.store
	label := jc.b.cfg.Checks.HoldLabel
	hold, err := st.HoldOf(ctx, jc.target.Repo, pr.Number)
	if err != nil || label == "" || pr.State != "open" {
		return hold, err
	}
	switch on := pr.HasLabel(label); {
	case on && !hold.Held:
		// The bot's own removal of the label of a lift it recorded may be under way (unmirrorHold).
		if busy, err := st.LiftNoted(ctx, jc.target.Repo, pr.Number); err != nil || busy {
			return hold, err
		}
		if err := st.RecordHold(ctx, jc.target.Repo, pr.Number, "", store.ViaFound); err != nil {
			return store.HoldState{}, err
		}
		return st.HoldOf(ctx, jc.target.Repo, pr.Number)
	case !on && hold.Held:
		jc.log.Info("a hold in force lost its label: putting it back", "pr", pr.Number)
		if err := jc.gh.AddLabel(ctx, jc.repo, pr.Number, label); err != nil {
			return store.HoldState{}, err
		}
		pr.Labels = append(pr.Labels, label)
	}
	return hold, nil
}

// unmirrorHold takes the hold label off after a lift was recorded, noting first that the removal the bot
// hears of next is its own (so it is not taken for another app's).
func (jc *jobCtx) unmirrorHold(ctx context.Context, pr *ghclient.PullRequest) error {
	if err := jc.b.store.NoteLift(ctx, jc.target.Repo, pr.Number); err != nil {
		return err
	}
	return jc.gh.RemoveLabel(ctx, jc.repo, pr.Number, jc.b.cfg.Checks.HoldLabel)
}

// noteHoldLabel weighs the label change being handled (of an open pull request: a closed one's labels
// decide nothing). Putting the label on by hand is a hold by whoever did. Taking it off lifts the hold
// only when its remover may lift it (mayLift); anyone else's removal is undone, so the label cannot be
// used to sidestep /unhold's rule. Only the bot's own changes are exempt: its labels, and the removal of
// an /unhold it accepted (noted by Store.NoteLift). A removal by any other app (a labeler workflow the author
// can trigger) is weighed like a person's, and an app is no maintainer: the hold is put back.
func (jc *jobCtx) noteHoldLabel(ctx context.Context, t PullRequestTask, pr *ghclient.PullRequest) error {
	hold := jc.b.cfg.Checks.HoldLabel
	if t.Label == "" || !strings.EqualFold(t.Label, hold) || t.Sender == "" || pr.State != "open" {
		return nil
	}
	st := jc.b.store
	switch t.LabelAction {
	case "labeled":
		if t.SenderBot || !pr.HasLabel(hold) {
			return nil // the bot's own /hold (recorded with its holder), or removed again since
		}
		return st.RecordHold(ctx, t.Repo, pr.Number, t.Sender, store.ViaLabel)
	case "unlabeled":
		if pr.HasLabel(hold) {
			return nil // put back since
		}
		if t.SenderBot { // only an app's removal can be the bot's own
			if own, err := st.TakeLift(ctx, t.Repo, pr.Number); err != nil || own {
				return err // the bot's removal of an accepted /unhold (recorded with its lifter)
			}
		}
		cur, err := st.HoldOf(ctx, t.Repo, pr.Number)
		if err != nil || !cur.Held {
			return err // nothing in force: the label had nothing to mirror
		}
		ok := false
		if !t.SenderBot {
			if ok, err = jc.mayLift(ctx, pr, cur, t.Sender); err != nil {
				return err
			}
		}
		if ok {
			return st.RecordLift(ctx, t.Repo, pr.Number, t.Sender, store.ViaLabel)
		}
		jc.log.Warn("hold label removed by someone who may not lift the hold: putting it back", "pr", pr.Number, "sender", t.Sender, "app", t.SenderBot)
		if err := jc.gh.AddLabel(ctx, jc.repo, pr.Number, hold); err != nil {
			return err
		}
		pr.Labels = append(pr.Labels, hold)
	}
	return nil
}

// mayLift reports whether user may lift the hold in force: whoever alone placed it, or a maintainer of the
// base branch tip's configuration. Not an owner of a package the pull request touches: its author chooses
// what to touch, so a second account owning a package dragged into the change must not lift a
// maintainer's hold. The author lifts only the author's own hold.
func (jc *jobCtx) mayLift(ctx context.Context, pr *ghclient.PullRequest, hold store.HoldState, user string) (bool, error) {
	if hold.LiftableBy(user) {
		return true, nil
	}
	if strings.EqualFold(user, pr.Author) {
		return false, nil
	}
	br, err := jc.baseRulesOf(ctx, pr)
	if err != nil || br.rules == nil {
		return false, err // invalid rules on the base: nobody is a maintainer, nothing is loosened
	}
	return approval.MayApprove(ctx, approval.Policy{Maintainers: br.rules.Config.Maintainers}, user, jc.lookup())
}

func unholdRefusal(user string, hold store.HoldState) string {
	if len(hold.Holders) == 0 {
		return fmt.Sprintf("`/unhold`: the hold was not placed by @%s; only a maintainer may lift it", user)
	}
	by := "@" + strings.Join(hold.Holders, ", @")
	if hold.Unknown {
		by += " and by a label nobody was heard placing"
	}
	return fmt.Sprintf("`/unhold`: the hold was placed by %s; only they alone or a maintainer may lift it (not the author, nor an owner of a package the pull request touches)", by)
}

// holdHistory is the hold's history as an information line of the readiness comment (none: nil).
func holdHistory(hold store.HoldState) []merge.Condition {
	if len(hold.History) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("Hold history:")
	for _, e := range hold.History {
		who := report.Text(e.Login)
		var what string
		switch {
		case e.Action == store.HoldLifted && e.Via == store.ViaCommand:
			what = "lifted by " + who + " with `/unhold`"
		case e.Action == store.HoldLifted:
			what = "lifted by " + who + " (label taken off)"
		case e.Via == store.ViaCommand:
			what = "held by " + who + " with `/hold`"
		case e.Via == store.ViaLabel:
			what = "held by " + who + " (label put on)"
		case e.Login == "":
			what = "held by a label nobody was heard placing"
		default:
			what = "held by " + who
		}
		fmt.Fprintf(&b, "\n- %s, %s", what, e.At.Format(holdTimeFormat))
	}
	return []merge.Condition{{ID: merge.IDHold, Info: true, Text: b.String()}}
}

// holdTimeFormat is how the hold history shows when.
const holdTimeFormat = "2006-01-02 15:04:05 UTC"
