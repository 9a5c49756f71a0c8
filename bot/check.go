package bot

import (
	"context"
	"fmt"
	"time"

	"github.com/catalogbot/catalogbot/bot/checkrun"
	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/bot/store"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/report"
)

// check runs the pipeline on the head of the task's pull request (or of every open pull request whose
// head is the task's SHA) and reports it.
func (jc *jobCtx) check(ctx context.Context, t PullRequestTask) error {
	if err := jc.awaitAnnouncement(ctx, t.PR); err != nil {
		return err
	}
	prs := []int{t.PR}
	if t.PR == 0 {
		var err error
		if prs, err = jc.gh.PullRequestsForCommit(ctx, jc.repo, t.HeadSHA); err != nil {
			return err
		}
		if len(prs) == 0 {
			jc.log.Info("no open pull request has this head", "sha", t.HeadSHA)
		}
	}
	for _, n := range prs {
		if err := jc.checkPR(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

func (jc *jobCtx) checkPR(ctx context.Context, number int) error {
	pr, err := jc.gh.PullRequest(ctx, jc.repo, number)
	if err != nil {
		return err
	}
	if pr.State != "open" || pr.Merged || pr.Draft {
		jc.log.Info("pull request not checked", "pr", number, "state", pr.State, "draft", pr.Draft)
		return nil
	}
	b := jc.b
	if err := jc.dropStaleAnnouncement(ctx, number, pr.HeadSHA); err != nil {
		return err
	}
	r, err := b.store.StartRun(ctx, jc.job.ID, kindCheck, jc.target.Repo, number, pr.HeadSHA)
	if err != nil {
		return err
	}
	// The check is of this base: recorded even when it cannot run, so the merge decision never takes it
	// for a check of another base.
	r.BaseRef = pr.BaseRef
	cr := newCheckReporter(jc, r, pr.HeadSHA)
	if err := cr.start(ctx); err != nil {
		return err
	}
	rep, sets, err := jc.runPipeline(ctx, cr, pr)
	if ctx.Err() != nil {
		cr.cancelled(context.Cause(ctx))
		return ctx.Err()
	}
	if err != nil {
		if _, limited := ghclient.RateLimitedUntil(err); limited || diag.CategoryOf(err) == diag.Infra && jc.job.Attempts < b.cfg.Queue.MaxAttempts {
			return err // retried (after a rate limit's reset); the check run stays in progress
		}
		rep = errorReport(err)
	}
	rep.Title = fmt.Sprintf("pull request %s#%d at %s by %s", jc.target.Repo, number, short(pr.HeadSHA), pr.Author)
	r.Settings = sets
	if err := cr.complete(ctx, rep); err != nil {
		if checkrun.IsNotOwner(err) {
			jc.log.Info("check not reported: its run was settled or taken over meanwhile", "run", r.ID)
			return nil
		}
		return err
	}
	for _, s := range rep.Stages {
		b.metrics.stageSeconds.WithLabelValues(s.Name, string(s.Status)).Observe(s.Duration.Seconds())
	}
	t := PullRequestTask{Target: jc.target, PR: number, Reason: "check completed"}
	return jc.enqueue(ctx, kindEvaluate, fmt.Sprintf("evaluate:run:%d:%d", r.ID, jc.job.Attempts), t)
}

// runPipeline fetches the repository and runs the pipeline on the merge of the head into the base
// branch's current tip, from that tip. It fills the run's base fields.
func (jc *jobCtx) runPipeline(ctx context.Context, cr *checkReporter, pr *ghclient.PullRequest) (*report.Report, store.Settings, error) {
	r := cr.run
	// The base branch's current tip, as GitHub has it (the pull request's base.sha may be stale); fetch
	// only when a commit is missing: one repository's fetches serialize.
	tip, err := jc.gh.BranchSHA(ctx, jc.repo, pr.BaseRef)
	if err != nil {
		return nil, store.Settings{}, diag.InfraError(err)
	}
	dir, err := jc.fetch(ctx, []string{pr.HeadSHA, tip}, pr.Number)
	if err != nil {
		return nil, store.Settings{}, err
	}
	repo, err := gitrepo.Open(dir)
	if err != nil {
		return nil, store.Settings{}, diag.InfraError(err)
	}
	head, err := repo.SHA(pr.HeadSHA)
	if err != nil {
		return nil, store.Settings{}, diag.InfraError(fmt.Errorf("head %s of %s#%d is not in the fetched repository: %w", short(pr.HeadSHA), jc.target.Repo, pr.Number, err))
	}
	if _, err := repo.SHA(tip); err != nil {
		return nil, store.Settings{}, diag.InfraError(fmt.Errorf("base %s of %s#%d is not in the fetched repository: %w", short(tip), jc.target.Repo, pr.Number, err))
	}
	// What lands is the merge of the head into the tip: every stage runs on it, against the tip (the merge
	// base is the author's pick, and the head's tree alone is not what GitHub merges). The rules come
	// from the tip too; both are prepared once.
	r.BaseRef, r.BaseSHA, r.Tip = pr.BaseRef, tip, tip
	br, err := loadBaseRules(ctx, dir, tip, head)
	if err != nil {
		return nil, store.Settings{}, err
	}
	sets, err := br.settings()
	if err != nil {
		return nil, store.Settings{}, err
	}
	if br.rules == nil {
		// An invalid configuration on the base blocks merging; it never falls back to defaults.
		return &report.Report{Stages: []report.Stage{br.stage}}, sets, nil
	}
	res, err := jc.approvalsOf(ctx, pr, *sets.Policy)
	if err != nil {
		return nil, store.Settings{}, err
	}
	r.Approvers = res.Current
	if sets.Release, err = jc.releaseGrant(ctx, br, pr); err != nil {
		return nil, store.Settings{}, err
	}
	grant, reviewNeeded, err := jc.promotionGrant(ctx, br, pr)
	if err != nil {
		return nil, store.Settings{}, err
	}
	sets.Promotion, sets.ReviewNeeded = grant.Package, reviewNeeded
	rep, err := pipeline.Run(ctx, pipeline.Input{Change: br.change, Author: pr.Author, Release: sets.Release, Promotion: grant,
		Approvers: res.Current, Membership: &membership{gh: jc.gh, cache: map[string]bool{}}, RemoteOptions: jc.remoteOptions(), Smoke: jc.b.smokeInput(),
		SkipImages: jc.b.cfg.Checks.SkipImages, Observer: cr, StageTimeout: jc.b.cfg.Timeouts.Stage})
	return rep, sets, err
}

// fetch makes sure the clone holds the commits in want (fetching branches and the pull requests' heads
// when one is missing; nil want always fetches).
func (jc *jobCtx) fetch(ctx context.Context, want []string, pulls ...int) (string, error) {
	if len(want) > 0 {
		if dir, ok := jc.b.git.Has(jc.repo.Owner, jc.repo.Name, want...); ok {
			return dir, nil
		}
	}
	token, err := jc.gh.GitToken(ctx)
	if err != nil {
		return "", diag.InfraError(err)
	}
	return jc.b.git.Fetch(ctx, jc.repo.Owner, jc.repo.Name, token, want, pulls...)
}

// errorReport is the report of a run that could not run at all.
func errorReport(err error) *report.Report {
	st := report.Stage{Name: "setup", Err: err.Error(), Status: report.StatusOf(nil, err)}
	return &report.Report{Stages: []report.Stage{st}}
}

// membership answers owners' org/team questions with GitHub, once per question per job.
type membership struct {
	gh    ghclient.GitHub
	cache map[string]bool
}

func (m *membership) IsMember(ctx context.Context, org, team, login string) (bool, error) {
	k := org + "/" + team + "/" + login
	if v, ok := m.cache[k]; ok {
		return v, nil
	}
	v, err := m.gh.IsTeamMember(ctx, org, team, login)
	if err != nil {
		return false, diag.InfraError(err)
	}
	m.cache[k] = v
	return v, nil
}

// timeNow is the clock for progress throttling.
var timeNow = time.Now
