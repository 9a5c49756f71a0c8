package bot

import (
	"context"
	"strings"

	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/checks/approval"
)

// noteHoldLabel records who put the hold label on by hand (labeled), and lets a hand-removed hold go
// only when its remover may lift it: anyone else's removal is undone, so the label cannot be used to
// sidestep /unhold's rule. The bot's own label changes are ignored.
func (jc *jobCtx) noteHoldLabel(ctx context.Context, pr *ghclient.PullRequest) error {
	t := jc.task
	hold := jc.b.cfg.Checks.HoldLabel
	if t.Label == "" || !strings.EqualFold(t.Label, hold) || t.SenderBot || t.Sender == "" {
		return nil
	}
	st := jc.b.store
	switch t.LabelAction {
	case "labeled":
		if !pr.HasLabel(hold) {
			return nil // removed again since
		}
		return st.addHold(ctx, t.Repo, pr.Number, t.Sender)
	case "unlabeled":
		if pr.HasLabel(hold) {
			return nil // put back since
		}
		holders, err := st.holders(ctx, t.Repo, pr.Number)
		if err != nil {
			return err
		}
		ok := approval.MayLiftHold(t.Sender, holders, false)
		if !ok && !strings.EqualFold(t.Sender, pr.Author) { // the author lifts only the author's own hold
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
		jc.log.Warn("hold label removed by someone who may not lift the hold: putting it back", "pr", pr.Number, "sender", t.Sender)
		if err := jc.gh.AddLabel(ctx, jc.repo, pr.Number, hold); err != nil {
			return err
		}
		pr.Labels = append(pr.Labels, hold)
	}
	return nil
}
