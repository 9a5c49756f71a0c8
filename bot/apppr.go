package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/bot/gitcache"
	"github.com/catalogbot/catalogbot/bot/queue"
	"github.com/catalogbot/catalogbot/bot/store"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/pipeline"
)

// The pull requests the App opens itself (releases, promotions) share these steps: the branch is created
// at the App's commit (never moved), the pull request is opened once (looked up by its branch when
// GitHub's answer is lost), adopted only when its head is still the App's commit, and then checked like
// any other pull request.

// pushAppBranch creates branch at commit; a branch already there (an earlier attempt pushed it) is left
// as it is, and a branch at another commit is never overwritten. subject names the job in errors.
func (jc *jobCtx) pushAppBranch(ctx context.Context, repo *gitrepo.Repo, subject, branch, commit string) error {
	at, err := repo.SHA(gitcache.BranchRef(branch))
	if err != nil {
		at = "" // no such branch in the fetch
	}
	switch at {
	case commit:
		return nil
	case "":
	default:
		return diag.UsageError(fmt.Errorf("%s: branch %s exists at %s, not at the App's commit %s; delete it to run it again",
			subject, branch, short(at), short(commit)))
	}
	token, err := jc.gh.GitToken(ctx)
	if err != nil {
		return diag.InfraError(err)
	}
	err = jc.b.git.Push(ctx, jc.repo.Owner, jc.repo.Name, token, commit, branch, "")
	if errors.Is(err, gitcache.ErrBranchMoved) {
		return diag.InfraError(err) // created meanwhile: the next attempt fetches it and looks again
	}
	return err
}

// openAppPR opens the pull request np, or finds the one of its branch (ghclient.OpenOrFind: an earlier
// answer may have been lost); a failure is the infrastructure's, retried.
func (jc *jobCtx) openAppPR(ctx context.Context, np ghclient.NewPullRequest) (*ghclient.PullRequest, error) {
	pr, err := ghclient.OpenOrFind(ctx, jc.gh, jc.repo, np)
	if err != nil {
		return nil, diag.InfraError(err)
	}
	return pr, nil
}

// foreignAppPR refuses pr, a pull request of the App's branch, when its head is not the commit the App
// pushed there: it is not the App's, the job fails naming it, and nothing is granted on the App's behalf.
func foreignAppPR(subject, branch, commit string, pr *ghclient.PullRequest) error {
	if commit != "" && pr.HeadSHA == commit {
		return nil
	}
	return diag.UsageError(fmt.Errorf("%s: branch %s already has pull request #%d at %s, not a commit of this bot; "+
		"close it and delete the branch to run it again", subject, branch, pr.Number, short(pr.HeadSHA)))
}

// queueAppPRCheck queues the check of the App's pull request pr (once per head: delivery names it).
func (jc *jobCtx) queueAppPRCheck(ctx context.Context, pr *ghclient.PullRequest, reason, delivery string) error {
	t := PullRequestTask{Target: jc.target, PR: pr.Number, HeadSHA: pr.HeadSHA, Sender: pr.Author, Reason: reason}
	j, err := newJob(jc.job.Event, kindCheck, t, prKey(t.Repo, t.PR), true, false)
	if err != nil {
		return err
	}
	j.Delivery = fmt.Sprintf("%s:%s#%d@%s", delivery, strings.ToLower(t.Repo), pr.Number, pr.HeadSHA)
	_, err = jc.b.enqueue(ctx, j, t, "")
	return err
}

// appSignature is the author and committer of the App's commits: its check name.
func (jc *jobCtx) appSignature() gitcache.Signature {
	return gitcache.Signature{Name: jc.b.cfg.Checks.Name, Email: jc.b.cfg.Checks.Name + "@users.noreply.github.com"}
}

// appPRJob is one App pull-request job (a release, a promotion): what its kind does itself. runAppPRJob
// does the rest, the same for every kind: the job's record says whether its pull request is already
// open; a pull request of its branch (an earlier attempt's) is adopted; otherwise the pushed commit is
// checked out, the kind computes its change, the App commits it on the branch (recorded), pushes the
// branch, opens the pull request and adopts it. A failed attempt is settled (settleAppPRJob).
type appPRJob struct {
	// rec is the job's row (its table's), save writes it.
	rec  store.AppPRRecord
	save func(context.Context) error
	// name names the job in errors ("release <dir>"), noun in its logs, the check's reason and delivery
	// ("release"), done in the log of a job found already done ("already released").
	name, noun, done string
	// attrs are the log attributes naming the job.
	attrs []any
	// change computes the App's commit and pull request at the pushed commit's checkout pc.
	change func(ctx context.Context, pc *pushCheckout) (*appPRChange, error)
	// base is the branch its pull request merges into: the default branch the job's push was to.
	base string
	// adopting, when set, is done to the App's pull request before it is recorded (a promotion labels it).
	adopting func(ctx context.Context, pr *ghclient.PullRequest) error
}

// appPRChange is what an App pull-request job commits and opens.
type appPRChange struct {
	files          map[string][]byte
	message, title string
	// body is the pull request's body naming commit, the App's commit.
	body func(commit string) string
}

// logAttrs are j's log attributes followed by more.
func (j *appPRJob) logAttrs(more ...any) []any { return append(slices.Clip(j.attrs), more...) }

// runAppPRJob runs the App pull-request job j (appPRJob).
func (jc *jobCtx) runAppPRJob(ctx context.Context, j *appPRJob) error {
	row := j.rec.Record()
	if row.State == store.AppPROpened {
		jc.log.Info(j.done, j.logAttrs("pr", row.PR)...)
		return nil
	}
	err := jc.appPRSteps(ctx, j)
	if err == nil {
		return nil
	}
	return jc.settleAppPRJob(ctx, err, j)
}

func (jc *jobCtx) appPRSteps(ctx context.Context, j *appPRJob) error {
	row := j.rec.Record()
	// A pull request of the branch opened by an earlier attempt that stopped before recording it.
	if pr, err := jc.gh.FindPullRequest(ctx, jc.repo, row.Branch); err != nil {
		return diag.InfraError(err)
	} else if pr != nil {
		return jc.adoptAppPR(ctx, j, pr)
	}
	pc, err := jc.checkoutPush(ctx, row.PushSHA)
	if err != nil {
		return err
	}
	defer pc.cleanup()
	c, err := j.change(ctx, pc)
	if err != nil {
		return err
	}
	sha, err := gitcache.CommitFiles(pc.clone, row.PushSHA, c.files, jc.appSignature(), c.message, pc.commit.Committer.When)
	if err != nil {
		return fmt.Errorf("commit the %s: %w", j.rec.Subject(), err)
	}
	row.Commit = sha
	if err := j.save(ctx); err != nil {
		return err
	}
	if err := jc.pushAppBranch(ctx, pc.repo, j.name, row.Branch, row.Commit); err != nil {
		return err
	}
	pr, err := jc.openAppPR(ctx, ghclient.NewPullRequest{Title: c.title, Body: c.body(sha), Head: row.Branch, Base: j.base})
	if err != nil {
		return err
	}
	return jc.adoptAppPR(ctx, j, pr)
}

// adoptAppPR records pr as j's pull request when its head is j's commit, and queues its check. A pull
// request of the branch whose head is another commit is not the App's: the job fails, naming it, and
// nothing is granted on the App's behalf.
func (jc *jobCtx) adoptAppPR(ctx context.Context, j *appPRJob, pr *ghclient.PullRequest) error {
	row := j.rec.Record()
	if err := foreignAppPR(j.name, row.Branch, row.Commit, pr); err != nil {
		return err
	}
	if j.adopting != nil {
		if err := j.adopting(ctx, pr); err != nil {
			return err
		}
	}
	row.PR, row.State, row.Error = pr.Number, store.AppPROpened, ""
	if err := j.save(ctx); err != nil {
		return err
	}
	jc.log.Info(j.noun+" pull request opened", j.logAttrs("pr", pr.Number, "head", pr.HeadSHA)...)
	return jc.queueAppPRCheck(ctx, pr, j.noun+" pull request opened", j.noun+"-check")
}

// settleAppPRJob records the failed attempt err of j. Stopped (a shutdown requeues the job), or an
// infrastructure failure with attempts left: pending, to be retried; anything else, or the last attempt,
// fails it, and the status page says why.
func (jc *jobCtx) settleAppPRJob(ctx context.Context, err error, j *appPRJob) error {
	row := j.rec.Record()
	row.Error = err.Error()
	infra := diag.CategoryOf(err) == diag.Infra
	if ctx.Err() == nil && (!infra || jc.job.Attempts >= jc.b.cfg.Queue.MaxAttempts) {
		row.State = store.AppPRFailed
	}
	if serr := j.save(context.WithoutCancel(ctx)); serr != nil {
		return errors.Join(err, serr)
	}
	if !infra && ctx.Err() == nil {
		return queue.Permanent(err)
	}
	return err
}

// pushCheckout is the pushed commit an App job computes its pull request from: the clone, the commit, its
// configuration and layout, and a throw-away checkout of it in work (cleanup removes it).
type pushCheckout struct {
	clone   string
	repo    *gitrepo.Repo
	commit  *object.Commit
	cfg     *config.Config
	layout  *pipeline.Layout
	work    string
	cleanup func()
}

// checkoutPush fetches (always: the job's branch may have been pushed by an earlier attempt) and checks out
// the pushed commit sha, under its own configuration.
func (jc *jobCtx) checkoutPush(ctx context.Context, sha string) (*pushCheckout, error) {
	clone, err := jc.fetch(ctx, nil)
	if err != nil {
		return nil, err
	}
	pc := &pushCheckout{clone: clone}
	if pc.repo, err = gitrepo.Open(clone); err != nil {
		return nil, err
	}
	if pc.commit, err = pc.repo.Resolve(sha); err != nil {
		return nil, diag.InfraError(fmt.Errorf("pushed commit %s is not in the fetched repository: %w", short(sha), err))
	}
	if pc.cfg, err = pipeline.ConfigAt(pc.repo, pc.commit); err != nil {
		return nil, diag.UsageError(err)
	}
	if pc.layout, err = pipeline.LayoutAt(pc.cfg, pc.commit); err != nil {
		return nil, diag.UsageError(err)
	}
	if pc.work, pc.cleanup, err = pc.repo.Checkout(ctx, pc.commit); err != nil {
		return nil, err
	}
	return pc, nil
}
