package bot

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/bot/store"
	"github.com/catalogbot/catalogbot/checks/approval"
	"github.com/catalogbot/catalogbot/checks/merge"
	"github.com/catalogbot/catalogbot/config"
)

// readinessMarker starts the bot's one comment per pull request; it is edited, never re-posted.
const readinessMarker = "<!-- catalogbot:readiness -->"

// conditions lists every requirement for merging pull request pr (checks/merge decides), given its
// latest check against its current base (nil: none on the current head and base), the approvals on its
// head and its hold (its history, as read when deciding).
func (b *Bot) conditions(pr *ghclient.PullRequest, r *store.Run, res approval.Result, hold store.HoldState) []merge.Condition {
	f := merge.Facts{Head: pr.HeadSHA, BaseRef: pr.BaseRef, State: pr.State, Merged: pr.Merged, Draft: pr.Draft,
		Mergeable: pr.Mergeable, Labels: pr.Labels, HoldLabel: b.cfg.Checks.HoldLabel, Held: hold.Held, Holders: hold.Holders,
		ConfigFile: config.ConfigFile, Approvals: res}
	if r != nil {
		f.Check = &merge.Check{Verdict: r.Verdict, HeadSHA: r.HeadSHA, BaseRef: r.BaseRef, BaseTip: r.Tip, URL: b.runURL(r.ID), Approvers: r.Approvers}
		f.ConfigError, f.RequiredApprovals, f.RequiredLabels = r.Settings.ConfigError, r.Settings.RequiredApprovals, r.Settings.RequiredLabels
		f.Release, f.Promotion, f.ReviewNeeded = r.Settings.Release, r.Settings.Promotion, r.Settings.ReviewNeeded
	}
	return append(merge.Decide(f), holdHistory(hold)...)
}

// readinessBody renders the comment: the conditions (unmet first, then met ones, then information), then
// notes.
func readinessBody(headline string, cs []merge.Condition, notes ...string) string {
	var b strings.Builder
	b.WriteString(readinessMarker + "\n")
	fmt.Fprintf(&b, "### catalogbot: %s\n\n", headline)
	b.WriteString(merge.Markdown(cs))
	for _, n := range notes {
		b.WriteString(n + "\n\n")
	}
	b.WriteString("<sub>Commands: `/retest` runs the checks again, `/hold` and `/unhold` stop and allow merging, `/approve` (owners) approves and `/approve cancel` withdraws.</sub>\n")
	return b.String()
}

// upsertComment keeps the one readiness comment of a pull request: found by its marker, edited when its
// body changes, created only when there is none.
func (jc *jobCtx) upsertComment(ctx context.Context, number int, body string) error {
	st := jc.b.store
	id, old, err := st.ReadinessComment(ctx, jc.target.Repo, number)
	if err != nil {
		return err
	}
	if id == 0 {
		cs, err := jc.gh.Comments(ctx, jc.repo, number)
		if err != nil {
			return err
		}
		for _, c := range cs {
			if strings.HasPrefix(c.Body, readinessMarker) {
				id, old = c.ID, c.Body
			}
		}
	}
	if id != 0 && old == body {
		return st.SetReadinessComment(ctx, jc.target.Repo, number, id, body)
	}
	if id != 0 {
		err := jc.gh.EditComment(ctx, jc.repo, id, body)
		if ghclient.StatusOf(err) == http.StatusNotFound {
			id = 0 // someone deleted it
		} else if err != nil {
			return err
		}
	}
	if id == 0 {
		if id, err = jc.gh.CreateComment(ctx, jc.repo, number, body); err != nil {
			return err
		}
	}
	return st.SetReadinessComment(ctx, jc.target.Repo, number, id, body)
}
