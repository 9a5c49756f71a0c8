package bot

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/bot/store"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/report"
)

// commands carries out a comment's commands. Every command gets a reaction: +1 when done, -1 with a
// reply saying why when refused. In order: each command (bounded, then judged against the open pull
// request and the commenter's rights), the reactions and the reply, the follow-up jobs.
func (jc *jobCtx) commands(ctx context.Context, t CommandTask) error {
	pr, err := jc.gh.PullRequest(ctx, jc.repo, t.PR)
	if err != nil {
		return err
	}
	cr := &commandRun{jc: jc, task: t, pr: pr, user: t.Sender}
	for _, c := range t.Commands {
		if err := cr.do(ctx, c); err != nil {
			return err
		}
	}
	if err := cr.answer(ctx); err != nil {
		return err
	}
	// Follow-up jobs last: they may start at once.
	return cr.followUp(ctx)
}

// commandRun is what a comment's commands did so far: refused with a reason, accepted, and whether a
// check or an evaluation must follow. The commenter's role and the base's rules are read on first need.
type commandRun struct {
	jc                         *jobCtx
	task                       CommandTask
	pr                         *ghclient.PullRequest
	user                       string
	refusals                   []string
	accepted, evaluate, retest bool
	role                       string
	rules                      *baseRules
}

func (cr *commandRun) refuse(format string, args ...any) {
	cr.refusals = append(cr.refusals, fmt.Sprintf(format, args...))
}

func (cr *commandRun) roleOf(ctx context.Context) (string, error) {
	if cr.role == "" {
		r, err := cr.jc.gh.Permission(ctx, cr.jc.repo, cr.user)
		if err != nil {
			return "", err
		}
		cr.role = r
	}
	return cr.role, nil
}

func (cr *commandRun) rulesOf(ctx context.Context) (*baseRules, error) {
	if cr.rules == nil {
		br, err := cr.jc.baseRulesOf(ctx, cr.pr)
		if err != nil {
			return nil, err
		}
		cr.rules = br
	}
	return cr.rules, nil
}

// do carries out one command. A /retest is bounded before anything else, the refusals of unauthorized
// commenters included; no command acts on a pull request that is not open.
func (cr *commandRun) do(ctx context.Context, c Cmd) error {
	if c.Name == "retest" {
		admitted, err := cr.admitRetest(ctx)
		if err != nil || !admitted {
			return err
		}
	}
	if cr.pr.State != "open" {
		cr.refuse("`/%s`: the pull request is %s", c.Name, cr.pr.State)
		return nil
	}
	switch c.Name {
	case "retest", "hold":
		return cr.retestOrHold(ctx, c.Name)
	case "unhold":
		return cr.unhold(ctx)
	case "approve":
		return cr.approve(ctx, c.Arg)
	}
	return nil
}

// admitRetest counts the /retest against its bounds; one over them is ignored, with a reply when the
// bounds say so.
func (cr *commandRun) admitRetest(ctx context.Context) (bool, error) {
	jc := cr.jc
	a, err := jc.b.store.AdmitRetest(ctx, store.RetestComment{Repo: jc.target.Repo, PR: cr.pr.Number, Login: cr.user, Comment: cr.task.CommentID, At: time.Now()},
		store.RetestLimit{Max: retestLimit, Window: retestWindow})
	if err != nil || a.Admitted {
		return a.Admitted, err
	}
	jc.log.Info("/retest over the limit: ignored", "pr", cr.pr.Number, "user", cr.user, "reply", a.Reply)
	if a.Reply {
		if _, err := jc.gh.CreateComment(ctx, jc.repo, cr.pr.Number, retestRefusal(cr.user, a)); err != nil {
			return false, err
		}
	}
	return false, nil
}

// retestOrHold asks for a new check, or puts the pull request on hold: the author's or a collaborator's
// with triage access to do.
func (cr *commandRun) retestOrHold(ctx context.Context, name string) error {
	jc, pr := cr.jc, cr.pr
	r, err := cr.roleOf(ctx)
	if err != nil {
		return err
	}
	if !strings.EqualFold(cr.user, pr.Author) && !mayTriage(r) {
		cr.refuse("`/%s`: @%s is neither the author nor a collaborator with triage access", name, cr.user)
		return nil
	}
	if name == "retest" {
		cr.retest = true
	} else {
		// The history first, its mirror next: a label seen before its hold is recorded would be
		// recorded as a hold of unknown origin.
		if err := jc.b.store.RecordHold(ctx, jc.target.Repo, pr.Number, cr.user, store.ViaCommand); err != nil {
			return err
		}
		if err := jc.gh.AddLabel(ctx, jc.repo, pr.Number, jc.b.cfg.Checks.HoldLabel); err != nil {
			return err
		}
		cr.evaluate = true
	}
	cr.accepted = true
	return nil
}

// unhold lifts the hold when the commenter may.
func (cr *commandRun) unhold(ctx context.Context) error {
	jc, pr := cr.jc, cr.pr
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
		cr.accepted = true
		return nil
	}
	ok, err := jc.mayLift(ctx, pr, hold, cr.user)
	if err != nil {
		return err
	}
	if !ok {
		cr.refusals = append(cr.refusals, unholdRefusal(cr.user, hold))
		return nil
	}
	// The history first, its mirror next (as for /hold).
	if err := jc.b.store.RecordLift(ctx, jc.target.Repo, pr.Number, cr.user, store.ViaCommand); err != nil {
		return err
	}
	if err := jc.unmirrorHold(ctx, pr); err != nil {
		return err
	}
	cr.accepted, cr.evaluate = true, true
	return nil
}

// approve records the commenter's approval of the current head, or withdraws it (/approve cancel, which
// needs no right: it only ever blocks). Approving needs a maintainer or an owner of a changed package who
// is not the author, under valid base rules, and a comment written about the current head.
func (cr *commandRun) approve(ctx context.Context, arg string) error {
	jc, pr, user := cr.jc, cr.pr, cr.user
	switch arg {
	case "", "no-issue": // Prow's /approve no-issue approves
	case "cancel":
		if err := jc.b.store.CancelApproval(ctx, jc.target.Repo, pr.Number, user); err != nil {
			return err
		}
		cr.accepted, cr.evaluate = true, true
		return nil
	default:
		cr.refusals = append(cr.refusals, report.CodeSpan("/approve "+clipArg(arg))+": unknown argument; `/approve` approves, `/approve cancel` withdraws an approval")
		return nil
	}
	if strings.EqualFold(user, pr.Author) {
		cr.refuse("`/approve`: authors cannot approve their own pull request")
		return nil
	}
	br, err := cr.rulesOf(ctx)
	if err != nil {
		return err
	}
	if br.rules == nil {
		cr.refuse("`/approve`: the base branch's %s is invalid: fix it there first", config.ConfigFile)
		return nil
	}
	ok, err := br.mayAct(ctx, user, jc.lookup(), true)
	if err != nil {
		return err
	}
	if !ok {
		cr.refuse("`/approve`: @%s is not a maintainer or an owner of a package this pull request changes", user)
		return nil
	}
	// The approval is of the head the approver saw when writing the comment: if the bot first saw
	// the current head after that, the comment was about an earlier one.
	if stale, err := jc.approvesEarlierHead(ctx, pr, cr.task.CommentAt); err != nil {
		return err
	} else if stale {
		cr.refuse("`/approve`: the head moved to %s after this comment was written; approve the current head again", short(pr.HeadSHA))
		return nil
	}
	if err := jc.b.store.AddApproval(ctx, jc.target.Repo, pr.Number, user, pr.HeadSHA); err != nil {
		return err
	}
	cr.accepted, cr.evaluate = true, true
	return nil
}

// answer reacts to the comment, +1 when a command was done and -1 with a reply listing the refusals.
func (cr *commandRun) answer(ctx context.Context) error {
	jc := cr.jc
	if cr.accepted {
		if err := jc.gh.React(ctx, jc.repo, cr.task.CommentID, "+1"); err != nil {
			return err
		}
	}
	if len(cr.refusals) == 0 {
		return nil
	}
	if err := jc.gh.React(ctx, jc.repo, cr.task.CommentID, "-1"); err != nil {
		return err
	}
	body := "@" + cr.user + " not done:\n- " + strings.Join(cr.refusals, "\n- ")
	_, err := jc.gh.CreateComment(ctx, jc.repo, cr.pr.Number, body)
	return err
}

// followUp queues the check a /retest asked for, or else the evaluation a changed hold or approval needs
// (a check ends with an evaluation anyway).
func (cr *commandRun) followUp(ctx context.Context) error {
	jc, pr := cr.jc, cr.pr
	if cr.retest {
		// Queued, not cancelling the running check: a later /retest supersedes this one while it waits.
		t := PullRequestTask{Target: jc.target, PR: pr.Number, Reason: "/retest by " + cr.user}
		j, err := newJob(jc.job.Event, kindCheck, t, prKey(t.Repo, t.PR), false, false)
		if err != nil {
			return err
		}
		j.Delivery = fmt.Sprintf("command:%d:retest", cr.task.CommentID)
		_, err = jc.b.enqueue(ctx, j, t, "")
		return err
	}
	if cr.evaluate {
		t := PullRequestTask{Target: jc.target, PR: pr.Number, Reason: "command by " + cr.user}
		return jc.enqueue(ctx, kindEvaluate, fmt.Sprintf("command:%d:evaluate", cr.task.CommentID), t)
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

// approvesEarlierHead reports whether the comment being handled, written at at, was written before the bot
// first saw the pull request's current head (or the bot has not seen that head yet).
func (jc *jobCtx) approvesEarlierHead(ctx context.Context, pr *ghclient.PullRequest, at time.Time) (bool, error) {
	if at.IsZero() {
		return false, nil // a task queued before comment times were recorded
	}
	seen, ok, err := jc.b.store.HeadSeen(ctx, jc.target.Repo, pr.Number, pr.HeadSHA)
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
