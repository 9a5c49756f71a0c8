package githubtest

import (
	"slices"
	"time"
)

// PullRequest is the fake's model of a pull request. Seed it with Server.AddPullRequest; read it back with
// Server.PullRequest.
type PullRequest struct {
	Number  int    // 0: the next free number
	Title   string // default "Pull request N"
	Body    string
	User    string // the author's login; default "contributor"
	State   string // "open" (default) or "closed"
	Draft   bool
	HeadRef string // default "pr-N"; the fake keeps refs/heads/<HeadRef> at HeadSHA
	HeadSHA string // default: a SHA derived from repository, number and HeadRef
	BaseRef string // default: the repository's default branch
	BaseSHA string // default: the current SHA of refs/heads/<BaseRef>
	// Mergeable is GitHub's mergeable flag: nil while GitHub computes it (a merge is still attempted), false
	// makes merges fail with 405. AddPullRequest turns nil into true; use SetMergeable for nil.
	Mergeable *bool
	Labels    []string
	Files     []File

	// Set by the fake when the pull request is merged.
	Merged         bool
	MergedHeadSHA  string // the head SHA that was merged
	MergeCommitSHA string
	MergeMethod    string // "merge", "squash" or "rebase"
	CommitTitle    string
	CommitMessage  string
}

// copied is pr with Labels and Files of its own, so that neither the fake nor a test changes what the other
// holds.
func (pr PullRequest) copied() PullRequest {
	pr.Labels = slices.Clone(pr.Labels)
	pr.Files = slices.Clone(pr.Files)
	return pr
}

// File is a file a pull request changes.
type File struct {
	Name   string
	Status string // "added", "removed", "modified" (default), "renamed"
}

// CheckRun is a check run as the client created and updated it.
type CheckRun struct {
	ID          int64
	Name        string
	HeadSHA     string
	Status      string // "queued", "in_progress" or "completed"
	Conclusion  string // empty until completed
	DetailsURL  string
	ExternalID  string
	StartedAt   time.Time
	CompletedAt time.Time
	Output      CheckRunOutput
	Updates     int       // PATCH requests applied
	Received    time.Time // wall-clock time the create request arrived (the fake's clock is StartedAt)
}

// CheckRunOutput is a check run's output; Annotations accumulate over updates, as on GitHub.
type CheckRunOutput struct {
	Title       string       `json:"title"`
	Summary     string       `json:"summary"`
	Text        string       `json:"text"`
	Annotations []Annotation `json:"annotations"`
}

// Annotation is one check run annotation.
type Annotation struct {
	Path            string `json:"path"`
	StartLine       int    `json:"start_line"`
	EndLine         int    `json:"end_line"`
	StartColumn     int    `json:"start_column"`
	EndColumn       int    `json:"end_column"`
	AnnotationLevel string `json:"annotation_level"`
	Message         string `json:"message"`
	Title           string `json:"title"`
	RawDetails      string `json:"raw_details"`
}

// Comment is an issue (pull request conversation) comment.
type Comment struct {
	ID        int64
	Issue     int
	User      string
	Body      string
	CreatedAt time.Time
	UpdatedAt time.Time
	Edits     int // PATCH requests applied
	Reactions []Reaction
}

// Reaction is a reaction on an issue comment.
type Reaction struct {
	ID      int64
	User    string
	Content string // "+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"
}

// Review is a pull request review. Seed with Server.AddReview.
type Review struct {
	ID          int64 // assigned by AddReview
	User        string
	State       string // "APPROVED", "CHANGES_REQUESTED", "COMMENTED", "DISMISSED", "PENDING"
	Body        string
	CommitID    string // default: the pull request's head SHA
	SubmittedAt time.Time
}

// Status is a commit status.
type Status struct {
	ID          int64
	SHA         string
	State       string // "error", "failure", "pending", "success"
	TargetURL   string
	Description string
	Context     string
	Creator     string
	CreatedAt   time.Time
}
