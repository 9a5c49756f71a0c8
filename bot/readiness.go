package bot

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/checks/approval"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/report"
)

// readinessMarker starts the bot's one comment per pull request; it is edited, never re-posted.
const readinessMarker = "<!-- catalogbot:readiness -->"

// condition is one requirement for merging; info is a line that says something about them (met is
// ignored).
type condition struct {
	met  bool
	text string
	info bool
}

// conditions lists every requirement for merging pull request pr, given its latest check (nil: none on
// the current head), the approvals on its head and who placed its hold.
func (b *Bot) conditions(pr *ghclient.PullRequest, r *run, res approval.Result, holders []string) []condition {
	var out []condition
	switch {
	case r == nil:
		out = append(out, condition{false, fmt.Sprintf("catalogbot checks have not completed on the head %s yet", short(pr.HeadSHA)), false})
	case r.Verdict == string(report.Pass):
		out = append(out, condition{true, fmt.Sprintf("catalogbot checks passed on %s ([details](%s))", short(r.HeadSHA), b.runURL(r.ID)), false})
	default:
		out = append(out, condition{false, fmt.Sprintf("catalogbot checks did not pass on %s: %s ([details](%s))",
			short(r.HeadSHA), r.Verdict, b.runURL(r.ID)), false})
	}
	sets := settings{}
	if r != nil {
		sets = r.Settings
	}
	if sets.ConfigError != "" {
		out = append(out, condition{false, fmt.Sprintf("the base branch's %s is invalid (%s): fix it there; nothing merges until then",
			config.ConfigFile, report.Text(sets.ConfigError)), false})
	}
	if n := sets.RequiredApprovals; n > 0 {
		out = append(out, condition{len(res.Counted) >= n, approvalText(res, n), false})
	}
	for _, l := range sets.RequiredLabels {
		if pr.HasLabel(l) {
			out = append(out, condition{true, fmt.Sprintf("label %s is set", report.CodeSpan(l)), false})
		} else {
			out = append(out, condition{false, fmt.Sprintf("label %s is required", report.CodeSpan(l)), false})
		}
	}
	hold := b.cfg.Checks.HoldLabel
	switch {
	case pr.HasLabel(hold) && len(holders) > 0:
		out = append(out, condition{false, fmt.Sprintf("on hold (label %s, placed by %s): `/unhold` by them, a maintainer or an owner releases it",
			report.CodeSpan(hold), report.Text(strings.Join(holders, ", "))), false})
	case pr.HasLabel(hold):
		out = append(out, condition{false, fmt.Sprintf("on hold (label %s): `/unhold` by a maintainer or an owner releases it", report.CodeSpan(hold)), false})
	default:
		out = append(out, condition{true, "not on hold", false})
	}
	if pr.Draft {
		out = append(out, condition{false, "the pull request is a draft", false})
	}
	if pr.Mergeable != nil && !*pr.Mergeable {
		out = append(out, condition{false, "GitHub reports merge conflicts with the base branch", false})
	}
	if t := staleText(res); t != "" {
		out = append(out, condition{text: t, info: true})
	}
	return out
}

func allMet(cs []condition) bool {
	for _, c := range cs {
		if !c.met && !c.info {
			return false
		}
	}
	return true
}

// readinessBody renders the comment: unmet conditions first, then met ones, then notes.
func readinessBody(headline string, cs []condition, notes ...string) string {
	var b strings.Builder
	b.WriteString(readinessMarker + "\n")
	fmt.Fprintf(&b, "### catalogbot: %s\n\n", headline)
	var unmet, met, info []string
	for _, c := range cs {
		switch {
		case c.info:
			info = append(info, c.text)
		case c.met:
			met = append(met, "- [x] "+c.text)
		default:
			unmet = append(unmet, "- [ ] "+c.text)
		}
	}
	if len(unmet) > 0 {
		b.WriteString("**Not yet met:**\n" + strings.Join(unmet, "\n") + "\n\n")
	}
	if len(met) > 0 {
		b.WriteString("**Met:**\n" + strings.Join(met, "\n") + "\n\n")
	}
	for _, n := range append(info, notes...) {
		b.WriteString(n + "\n\n")
	}
	b.WriteString("<sub>Commands: `/retest` runs the checks again, `/hold` and `/unhold` stop and allow merging, `/approve` (owners) approves.</sub>\n")
	return b.String()
}

// upsertComment keeps the one readiness comment of a pull request: found by its marker, edited when its
// body changes, created only when there is none.
func (jc *jobCtx) upsertComment(ctx context.Context, number int, body string) error {
	st := jc.b.store
	id, old, err := st.readinessComment(ctx, jc.task.Repo, number)
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
		return st.setReadinessComment(ctx, jc.task.Repo, number, id, body)
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
	return st.setReadinessComment(ctx, jc.task.Repo, number, id, body)
}
