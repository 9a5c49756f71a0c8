package bot

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/catalogbot/catalogbot/bot/queue"
	"github.com/catalogbot/catalogbot/bot/store"
)

// Job kinds.
const (
	kindEvaluate   = "evaluate"    // re-evaluate merge readiness, update the comment, merge (serial per repo)
	kindCommand    = "command"     // /retest, /hold, /unhold, /approve
	kindPublish    = "publish"     // republish the catalog image after a push to the default branch (serial)
	kindMergeGroup = "merge_group" // run the pipeline on a merge queue group
)

// kindCheck runs the pipeline on a pull request's head and reports it: its runs are the store's checks.
const kindCheck = store.KindCheck

// handledEvents are the events routeEvent acts on (besides ping). The webhook answers others without
// reading their body, and they are counted as event "other".
var handledEvents = map[string]bool{"pull_request": true, "check_suite": true, "check_run": true, "issue_comment": true,
	"pull_request_review": true, "push": true, "merge_group": true, "installation": true, "installation_repositories": true}

// route is what the webhook handler does with a delivery.
type route struct {
	job *queue.Job // nil: nothing to enqueue
	// cancelKey, when set, supersedes queued and stops running jobs with this key (a closed pull request).
	cancelKey string
	// note explains an ignored delivery or an event handled on the spot (installation).
	note string
	// task is the job's payload (or, for cancelKey, the pull request's).
	task task
	// also is a second job of the delivery (a push's release and promotion scan), queued before job under the
	// delivery's ID with alsoSuffix, so a redelivery finds both queued.
	also *queue.Job
}

// alsoSuffix ends the delivery ID of a delivery's second job.
const alsoSuffix = "/releases"

func prKey(repo string, n int) string { return fmt.Sprintf("pr:%s#%d", strings.ToLower(repo), n) }

func serialKey(repo string) string { return "repo:" + strings.ToLower(repo) }

func newJob(event, kind string, t task, key string, cancelRunning bool, serial bool) (*queue.Job, error) {
	payload, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	repo := t.target().Repo
	j := &queue.Job{Event: event, Kind: kind, Repo: repo, Key: key, CancelRunning: cancelRunning, Payload: payload}
	if serial {
		j.Serial = serialKey(repo)
	}
	return j, nil
}

// jobRoute routes a delivery to a job of t (newJob), keeping t itself: the payload is encoded once and
// never decoded on the webhook's path.
func jobRoute(event, kind string, t task, key string, cancelRunning bool, serial bool) (route, error) {
	j, err := newJob(event, kind, t, key, cancelRunning, serial)
	return route{job: j, task: t}, err
}

// routeEvent decides, from the payload alone, which job a delivery becomes. Payloads are decoded into
// the few fields the bot uses, so a field the bot ignores cannot make a delivery fail.
func (b *Bot) routeEvent(event string, payload []byte) (route, error) {
	if event == "ping" {
		return route{note: "pong"}, nil
	}
	if !handledEvents[event] {
		return route{note: "event " + event + " is not handled"}, nil
	}
	var e envelope
	if err := json.Unmarshal(payload, &e); err != nil {
		return route{}, fmt.Errorf("parse %s payload: %w", event, err)
	}
	var r route
	var err error
	switch event {
	case "pull_request":
		r, err = b.routePullRequest(event, &e)
	case "check_suite", "check_run":
		obj := e.CheckSuite
		if event == "check_run" {
			obj = e.CheckRun
		}
		if e.Action != "rerequested" || obj == nil {
			return route{note: event + " " + e.Action + " is not handled"}, nil
		}
		var prs []int
		for _, pr := range obj.PullRequests {
			prs = append(prs, pr.Number)
		}
		r, err = b.rerun(event, &e, obj.HeadSHA, prs)
	case "issue_comment":
		r, err = b.routeComment(event, &e)
	case "pull_request_review":
		switch e.Action {
		case "submitted", "dismissed", "edited":
		default:
			return route{note: "pull_request_review " + e.Action + " is not handled"}, nil
		}
		if e.PullRequest == nil {
			return route{}, fmt.Errorf("pull_request_review payload without pull_request")
		}
		t := PullRequestTask{Target: targetOf(&e), PR: e.PullRequest.Number, Sender: e.Sender.Login,
			Reason: "review " + e.Action + " by " + e.Sender.Login}
		if e.Review != nil && e.Action != "edited" {
			t.ReviewUser, t.ReviewState = e.Review.User.Login, strings.ToLower(e.Review.State)
			if e.Action == "dismissed" {
				t.ReviewState = "dismissed"
			}
		}
		r, err = jobRoute(event, kindEvaluate, t, "", false, true)
	case "push":
		r, err = b.routePush(event, &e)
	case "merge_group":
		if e.Action != "checks_requested" || e.MergeGroup == nil {
			return route{note: "merge_group " + e.Action + " is not handled"}, nil
		}
		mg := e.MergeGroup
		t := MergeGroupTask{Target: targetOf(&e), HeadSHA: mg.HeadSHA, BaseSHA: mg.BaseSHA, HeadRef: mg.HeadRef}
		r, err = jobRoute(event, kindMergeGroup, t, "", false, false)
	case "installation", "installation_repositories":
		b.metrics.installations.WithLabelValues(event, installationAction(e.Action)).Inc()
		b.log.Info("installation event", "event", event, "action", e.Action, "installation", e.Installation.ID,
			"account", e.Installation.Account.Login, "repositories", len(e.Repositories),
			"added", len(e.RepositoriesAdded), "removed", len(e.RepositoriesRemoved))
		return route{note: event + " " + e.Action + " noted"}, nil
	}
	if err != nil {
		return route{}, err
	}
	if r.job != nil && !b.serves(r.job.Repo) {
		return route{note: "repository " + r.job.Repo + " is not served by this bot"}, nil
	}
	return r, nil
}

// serves reports whether the bot acts on a repository (token mode serves one).
func (b *Bot) serves(repo string) bool {
	if repo == "" {
		return false
	}
	return b.cfg.GitHub.Repository == "" || strings.EqualFold(repo, b.cfg.GitHub.Repository)
}

func (b *Bot) routePullRequest(event string, e *envelope) (route, error) {
	pr := e.PullRequest
	if pr == nil {
		return route{}, fmt.Errorf("pull_request payload without pull_request")
	}
	repo := e.Repository.FullName
	t := PullRequestTask{Target: targetOf(e), PR: pr.Number, HeadSHA: pr.Head.SHA, Sender: e.Sender.Login,
		Reason: "pull_request " + e.Action}
	switch e.Action {
	case "opened", "synchronize", "reopened", "ready_for_review":
		if pr.Draft {
			return route{note: "draft pull requests are checked when ready for review"}, nil
		}
		// A new push stops the running check of the old head and replaces queued ones.
		return jobRoute(event, kindCheck, t, prKey(repo, pr.Number), true, false)
	case "edited":
		// A new base branch: the check of the old base says nothing about this one. Check again against
		// the new base (its tip's configuration and owners); the old check never merges it.
		if e.Changes == nil || e.Changes.Base == nil {
			return route{note: "pull_request edited without a change of base is not handled"}, nil
		}
		if pr.Draft {
			return route{note: "draft pull requests are checked when ready for review"}, nil
		}
		t.Reason = fmt.Sprintf("base changed from %s to %s", e.Changes.Base.Ref.From, pr.Base.Ref)
		return jobRoute(event, kindCheck, t, prKey(repo, pr.Number), true, false)
	case "closed":
		if !b.serves(repo) {
			return route{note: "repository " + repo + " is not served by this bot"}, nil
		}
		return route{cancelKey: prKey(repo, pr.Number), task: t, note: "closed: pending checks cancelled"}, nil
	case "labeled", "unlabeled":
		if e.Label != nil {
			t.Label, t.LabelAction = e.Label.Name, e.Action
		}
		t.SenderBot = isBot(e.Sender)
		return jobRoute(event, kindEvaluate, t, "", false, true)
	}
	return route{note: "pull_request " + e.Action + " is not handled"}, nil
}

// rerun routes a re-requested check suite or check run: a check job per pull request of the head (or one
// job that looks them up).
func (b *Bot) rerun(event string, e *envelope, sha string, prs []int) (route, error) {
	t := PullRequestTask{Target: targetOf(e), HeadSHA: sha, Sender: e.Sender.Login,
		Reason: event + " re-requested by " + e.Sender.Login}
	key := ""
	if len(prs) == 1 {
		t.PR = prs[0]
		key = prKey(t.Repo, t.PR)
	}
	return jobRoute(event, kindCheck, t, key, key != "", false)
}

func (b *Bot) routeComment(event string, e *envelope) (route, error) {
	if e.Action != "created" {
		return route{note: "issue_comment " + e.Action + " is not handled"}, nil
	}
	if e.Issue == nil || e.Comment == nil {
		return route{}, fmt.Errorf("issue_comment payload without issue or comment")
	}
	if len(e.Issue.PullRequest) == 0 || string(e.Issue.PullRequest) == "null" {
		return route{note: "comment on an issue, not a pull request"}, nil
	}
	if isBot(e.Sender) {
		return route{note: "comments by bots are not commands"}, nil
	}
	cmds := parseCommands(e.Comment.Body)
	if len(cmds) == 0 {
		return route{note: "no command in the comment"}, nil
	}
	t := CommandTask{Target: targetOf(e), PR: e.Issue.Number,
		Sender: e.Comment.User.Login, CommentID: e.Comment.ID, CommentAt: e.Comment.CreatedAt, Commands: cmds}
	return jobRoute(event, kindCommand, t, "", false, false)
}

func (b *Bot) routePush(event string, e *envelope) (route, error) {
	def := e.Repository.DefaultBranch
	if def == "" || e.Ref != "refs/heads/"+def {
		return route{note: "push to " + e.Ref + ", not the default branch"}, nil
	}
	if e.Deleted || strings.Trim(e.After, "0") == "" {
		return route{note: "default branch deleted"}, nil
	}
	t := PushTask{Target: targetOf(e), DefaultBranch: def,
		Before: e.Before, After: e.After, Sender: e.Sender.Login}
	// A newer push supersedes a queued publish, but never interrupts one that is pushing.
	r, err := jobRoute(event, kindPublish, t, "publish:"+strings.ToLower(t.Repo), false, true)
	if err != nil {
		return r, err
	}
	// The bundle directories this push added are released, and the catalogs it added to the configuration
	// promoted into, whatever later pushes do: the scan has no key, so no newer push supersedes it.
	r.also, err = newJob(event, kindReleases, t, "", false, false)
	return r, err
}

// targetOf is the repository and installation of a delivery.
func targetOf(e *envelope) Target {
	return Target{Installation: e.Installation.ID, Repo: e.Repository.FullName}
}

// isBot reports whether a sender is an app rather than a person.
func isBot(u payloadUser) bool { return u.Type == "Bot" || strings.HasSuffix(u.Login, "[bot]") }

// installationAction is the action label of installation events: GitHub's actions, or "other".
func installationAction(a string) string {
	switch a {
	case "created", "deleted", "suspend", "unsuspend", "new_permissions_accepted", "added", "removed":
		return a
	}
	return "other"
}
