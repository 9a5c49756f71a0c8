package bot

import "time"

// A job's payload is its kind's task: what the webhook said, reduced to what the kind's handler uses. The
// JSON names are those of the one payload type every kind once shared, so a job queued then still decodes.

// task is any kind's task: each names the repository it acts on.
type task interface{ target() Target }

// Target is the repository a job acts on and the App installation it acts as.
type Target struct {
	Installation int64  `json:"installation,omitempty"`
	Repo         string `json:"repo"`
}

func (t Target) target() Target { return t }

// PullRequestTask is a check job's (kindCheck) and an evaluate job's (kindEvaluate) task.
type PullRequestTask struct {
	Target
	// PR is the pull request (0: find the pull requests of HeadSHA).
	PR      int    `json:"pr,omitempty"`
	HeadSHA string `json:"head_sha,omitempty"`
	Sender  string `json:"sender,omitempty"`
	// SenderBot is set when the sender is an app (the bot itself, say).
	SenderBot bool `json:"sender_bot,omitempty"`
	// ReviewUser and ReviewState (approved, changes_requested, dismissed, ...) are a review's, for a
	// pull_request_review delivery: a later changes-requested or dismissed review withdraws the
	// reviewer's /approve.
	ReviewUser  string `json:"review_user,omitempty"`
	ReviewState string `json:"review_state,omitempty"`
	// Label and LabelAction (labeled, unlabeled) are a pull request's label change.
	Label       string `json:"label,omitempty"`
	LabelAction string `json:"label_action,omitempty"`
	Reason      string `json:"reason,omitempty"`
}

// CommandTask is a command job's (kindCommand) task: a comment's commands on a pull request.
type CommandTask struct {
	Target
	PR        int    `json:"pr,omitempty"`
	Sender    string `json:"sender,omitempty"`
	CommentID int64  `json:"comment_id,omitempty"`
	// CommentAt is when the comment was written (GitHub's clock): an /approve is of the head then.
	CommentAt time.Time `json:"comment_at,omitzero"`
	Commands  []Cmd     `json:"commands,omitempty"`
}

// PushTask is a publish job's (kindPublish) and a push scan's (kindReleases) task: a push to the default
// branch.
type PushTask struct {
	Target
	DefaultBranch string `json:"default_branch,omitempty"`
	Before        string `json:"before,omitempty"`
	After         string `json:"after,omitempty"`
	Sender        string `json:"sender,omitempty"`
}

// MergeGroupTask is a merge group job's (kindMergeGroup) task.
type MergeGroupTask struct {
	Target
	HeadSHA string `json:"head_sha,omitempty"`
	BaseSHA string `json:"base_sha,omitempty"`
	HeadRef string `json:"head_ref,omitempty"`
}

// ReleaseTask is a release job's (kindRelease) task: the push that added the bundle directory.
type ReleaseTask struct {
	PushTask
	// Bundle is the bundle directory released (operators/<package>/<version>).
	Bundle string `json:"bundle,omitempty"`
}

// PromotionTask is a promotion job's (kindPromotion) task: the push that added the catalog.
type PromotionTask struct {
	PushTask
	// Catalog and Package are the catalog promoted into and the package directory (under operators/)
	// promoted.
	Catalog string `json:"catalog,omitempty"`
	Package string `json:"package,omitempty"`
}
