package bot

import (
	"context"
	"fmt"
	"github.com/catalogbot/catalogbot/report"
	"strings"
	"time"

	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/config"
)

// commands carries out a comment's commands. Every command gets a reaction: +1 when done, -1 with a
// reply saying why when refused.
func (jc *jobCtx) commands(ctx context.Context) error {
	pr, err := jc.gh.PullRequest(ctx, jc.repo, jc.task.PR)
	if err != nil {
		return err
	}
	user := jc.task.Sender
	var refusals []string
	accepted := false
	evaluate, retest := false, false
	var role string
	roleOf := func() (string, error) {
		if role == "" {
			r, err := jc.gh.Permission(ctx, jc.repo, user)
			if err != nil {
				return "", err
			}
			role = r
		}
		return role, nil
	}
	var br *baseRules // loaded on first need
	rulesOf := func() (*baseRules, error) {
		if br == nil {
			var err error
			if br, err = jc.baseRulesOf(ctx, pr); err != nil {
				return nil, err
			}
		}
		return br, nil
	}
	for _, c := range jc.task.Commands {
		if c.Name == "retest" {
			// bounded before anything else, the refusals of unauthorized commenters included
			a, err := jc.b.store.admitRetest(ctx, jc.task.Repo, pr.Number, user, jc.task.CommentID, time.Now())
			if err != nil {
				return err
			}
			if !a.admitted {
				jc.log.Info("/retest over the limit: ignored", "pr", pr.Number, "user", user, "reply", a.reply)
				if a.reply {
					if _, err := jc.gh.CreateComment(ctx, jc.repo, pr.Number, retestRefusal(user, a)); err != nil {
						return err
					}
				}
				continue
			}
		}
		if pr.State != "open" {
			refusals = append(refusals, fmt.Sprintf("`/%s`: the pull request is %s", c.Name, pr.State))
			continue
		}
		switch c.Name {
		case "retest", "hold":
			r, err := roleOf()
			if err != nil {
				return err
			}
			if !strings.EqualFold(user, pr.Author) && !mayTriage(r) {
				refusals = append(refusals, fmt.Sprintf("`/%s`: @%s is neither the author nor a collaborator with triage access", c.Name, user))
				continue
			}
			if c.Name == "retest" {
				retest = true
			} else {
				// The history first, its mirror next: a label seen before its hold is recorded would be
				// recorded as a hold of unknown origin.
				if err := jc.b.store.recordHold(ctx, jc.task.Repo, pr.Number, user, viaCommand); err != nil {
					return err
				}
				if err := jc.gh.AddLabel(ctx, jc.repo, pr.Number, jc.b.cfg.Checks.HoldLabel); err != nil {
					return err
				}
				evaluate = true
			}
			accepted = true
		case "unhold":
			// The history decides, not the label (syncHold makes the label its mirror first).
			hold, err := jc.syncHold(ctx, pr)
			if err != nil {
				return err
			}
			if !hold.Held {
				// Not on hold: nothing to lift. A label still on is the mirror of a lift whose removal
				// did not go through (syncHold leaves it while the lift is fresh): take it off now.
				if pr.HasLabel(jc.b.cfg.Checks.HoldLabel) {
					if err := jc.unmirrorHold(ctx, pr); err != nil {
						return err
					}
				}
				accepted = true
				continue
			}
			ok, err := jc.mayLift(ctx, pr, hold, user)
			if err != nil {
				return err
			}
			if !ok {
				refusals = append(refusals, unholdRefusal(user, hold))
				continue
			}
			// The history first, its mirror next (as for /hold).
			if err := jc.b.store.recordLift(ctx, jc.task.Repo, pr.Number, user, viaCommand); err != nil {
				return err
			}
			if err := jc.unmirrorHold(ctx, pr); err != nil {
				return err
			}
			accepted, evaluate = true, true
		case "approve":
			switch c.Arg {
			case "", "no-issue": // Prow's /approve no-issue approves
			case "cancel":
				// Withdrawing one's own approval needs no right: it only ever blocks.
				if err := jc.b.store.cancelApproval(ctx, jc.task.Repo, pr.Number, user); err != nil {
					return err
				}
				accepted, evaluate = true, true
				continue
			default:
				refusals = append(refusals, report.CodeSpan("/approve "+clipArg(c.Arg))+": unknown argument; `/approve` approves, `/approve cancel` withdraws an approval")
				continue
			}
			if strings.EqualFold(user, pr.Author) {
				refusals = append(refusals, "`/approve`: authors cannot approve their own pull request")
				continue
			}
			br, err := rulesOf()
			if err != nil {
				return err
			}
			if br.rules == nil {
				refusals = append(refusals, fmt.Sprintf("`/approve`: the base branch's %s is invalid: fix it there first", config.ConfigFile))
				continue
			}
			ok, err := br.mayAct(ctx, user, jc.lookup(), true)
			if err != nil {
				return err
			}
			if !ok {
				refusals = append(refusals, fmt.Sprintf("`/approve`: @%s is not a maintainer or an owner of a package this pull request changes", user))
				continue
			}
			// The approval is of the head the approver saw when writing the comment: if the bot first saw
			// the current head after that, the comment was about an earlier one.
			if stale, err := jc.approvesEarlierHead(ctx, pr); err != nil {
				return err
			} else if stale {
				refusals = append(refusals, fmt.Sprintf("`/approve`: the head moved to %s after this comment was written; approve the current head again", short(pr.HeadSHA)))
				continue
			}
			if err := jc.b.store.addApproval(ctx, jc.task.Repo, pr.Number, user, pr.HeadSHA); err != nil {
				return err
			}
			accepted, evaluate = true, true
		}
	}
	if accepted {
		if err := jc.gh.React(ctx, jc.repo, jc.task.CommentID, "+1"); err != nil {
			return err
		}
	}
	if len(refusals) > 0 {
		if err := jc.gh.React(ctx, jc.repo, jc.task.CommentID, "-1"); err != nil {
			return err
		}
		body := "@" + user + " not done:\n- " + strings.Join(refusals, "\n- ")
		if _, err := jc.gh.CreateComment(ctx, jc.repo, pr.Number, body); err != nil {
			return err
		}
	}
	// Follow-up jobs last: they may start at once.
	if retest {
		// Queued, not cancelling the running check: a later /retest supersedes this one while it waits.
		t := Task{Installation: jc.task.Installation, Repo: jc.task.Repo, PR: pr.Number, Reason: "/retest by " + user}
		j, err := newJob(jc.job.Event, kindCheck, t, prKey(t.Repo, t.PR), false, false)
		if err != nil {
			return err
		}
		j.Delivery = fmt.Sprintf("command:%d:retest", jc.task.CommentID)
		if _, err := jc.b.enqueue(ctx, j, t, ""); err != nil {
			return err
		}
	}
	if evaluate && !retest { // a check ends with an evaluation anyway
		t := Task{Installation: jc.task.Installation, Repo: jc.task.Repo, PR: pr.Number, Reason: "command by " + user}
		return jc.enqueue(ctx, kindEvaluate, fmt.Sprintf("command:%d:evaluate", jc.task.CommentID), t)
	}
	return nil
}

// clipArg keeps a refused argument short in the reply (it is the commenter's text; report.CodeSpan
// keeps it inert).
func clipArg(arg string) string {
	if r := []rune(arg); len(r) > 32 {
		arg = string(r[:32]) + "…"
	}
	return arg
}

func mayTriage(role string) bool {
	switch role {
	case "admin", "maintain", "write", "triage":
		return true
	}
	return false
}

// commentSkew is how much later than the comment the bot may first have seen the head it approves: GitHub
// stamps comments to the second, and the two clocks differ a little.
const commentSkew = 2 * time.Second

// approvesEarlierHead reports whether the comment being handled was written before the bot first saw the
// pull request's current head (or the bot has not seen that head yet).
func (jc *jobCtx) approvesEarlierHead(ctx context.Context, pr *ghclient.PullRequest) (bool, error) {
	at := jc.task.CommentAt
	if at.IsZero() {
		return false, nil // a task queued before comment times were recorded
	}
	seen, ok, err := jc.b.store.headSeen(ctx, jc.task.Repo, pr.Number, pr.HeadSHA)
	if err != nil || !ok {
		return !ok, err
	}
	return seen.After(at.Add(commentSkew)), nil
}

// baseRulesOf loads the rules of pull request pr from its base branch's current tip (as GitHub has it).
func (jc *jobCtx) baseRulesOf(ctx context.Context, pr *ghclient.PullRequest) (*baseRules, error) {
	tip, err := jc.gh.BranchSHA(ctx, jc.repo, pr.BaseRef)
	if err != nil {
		return nil, err
	}
	dir, err := jc.fetch(ctx, []string{pr.HeadSHA, tip}, pr.Number)
	if err != nil {
		return nil, err
	}
	return loadBaseRules(ctx, dir, tip, pr.HeadSHA)
}
