package bot

import (
	"context"
	"strings"

	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/checks/approval"
)

// noteHoldLabel records who put the hold label on by hand (labeled), and lets a removed hold go only when
// its remover may lift it: anyone else's removal is undone, so the label cannot be used to sidestep
// /unhold's rule. Only the bot's own changes are exempt: its labels, and the removal of an /unhold it
// accepted (noted by noteLift). A removal by any other app (a labeler workflow the author can trigger)
// is weighed like a person's: an app is no maintainer nor owner, so the hold is put back.
func (jc *jobCtx) noteHoldLabel(ctx context.Context, pr *ghclient.PullRequest) error {
	t := jc.task
	hold := jc.b.cfg.Checks.HoldLabel
	if t.Label == "" || !strings.EqualFold(t.Label, hold) || t.Sender == "" {
		return nil
	}
	st := jc.b.store
	switch t.LabelAction {
	case "labeled":
		if t.SenderBot || !pr.HasLabel(hold) {
			return nil // the bot's own /hold (recorded with its holder), or removed again since
		}
		return st.addHold(ctx, t.Repo, pr.Number, t.Sender)
	case "unlabeled":
		if pr.HasLabel(hold) {
			return nil // put back since
		}
		if t.SenderBot { // only an app's removal can be the bot's own
			if own, err := st.takeLift(ctx, t.Repo, pr.Number); err != nil || own {
				return err // the bot's removal of an accepted /unhold
			}
		}
		holders, err := st.holders(ctx, t.Repo, pr.Number)
		if err != nil {
			return err
		}
		ok := !t.SenderBot && approval.MayLiftHold(t.Sender, holders, false)
		if !ok && !t.SenderBot && !strings.EqualFold(t.Sender, pr.Author) { // the author lifts only the author's own hold
			br, err := jc.baseRulesOf(ctx, pr)
			if err != nil {
				return err
			}
			if br.rules != nil {
				if ok, err = br.mayAct(ctx, t.Sender, jc.lookup(), false); err != nil {
					return err
				}
			}
		}
		if ok {
			return st.clearHold(ctx, t.Repo, pr.Number)
		}
		jc.log.Warn("hold label removed by someone who may not lift the hold: putting it back", "pr", pr.Number, "sender", t.Sender, "app", t.SenderBot)
		if err := jc.gh.AddLabel(ctx, jc.repo, pr.Number, hold); err != nil {
			return err
		}
		pr.Labels = append(pr.Labels, hold)
	}
	return nil
}
