package bot

import (
	"encoding/json"
	"time"
)

// envelope holds the fields of GitHub webhook payloads the bot reads, for every event it handles.
type envelope struct {
	Action       string          `json:"action"`
	Repository   payloadRepo     `json:"repository"`
	Installation payloadInstall  `json:"installation"`
	Sender       payloadUser     `json:"sender"`
	PullRequest  *payloadPR      `json:"pull_request"`
	CheckSuite   *payloadChecks  `json:"check_suite"`
	CheckRun     *payloadChecks  `json:"check_run"`
	Issue        *payloadIssue   `json:"issue"`
	Comment      *payloadComment `json:"comment"`
	MergeGroup   *payloadGroup   `json:"merge_group"`
	Label        *payloadLabel   `json:"label"`
	Review       *payloadReview  `json:"review"`
	Changes      *payloadChanges `json:"changes"`
	// push
	Ref     string `json:"ref"`
	Before  string `json:"before"`
	After   string `json:"after"`
	Deleted bool   `json:"deleted"`
	// installation events
	Repositories        []json.RawMessage `json:"repositories"`
	RepositoriesAdded   []json.RawMessage `json:"repositories_added"`
	RepositoriesRemoved []json.RawMessage `json:"repositories_removed"`
}

type payloadUser struct {
	Login string `json:"login"`
	Type  string `json:"type"`
}

type payloadRepo struct {
	FullName      string `json:"full_name"`
	DefaultBranch string `json:"default_branch"`
}

type payloadInstall struct {
	ID      int64       `json:"id"`
	Account payloadUser `json:"account"`
}

type payloadRef struct {
	SHA string `json:"sha"`
	Ref string `json:"ref"`
}

type payloadPR struct {
	Number int         `json:"number"`
	Draft  bool        `json:"draft"`
	Head   payloadRef  `json:"head"`
	Base   payloadRef  `json:"base"`
	User   payloadUser `json:"user"`
}

type payloadChecks struct {
	HeadSHA      string `json:"head_sha"`
	PullRequests []struct {
		Number int `json:"number"`
	} `json:"pull_requests"`
}

type payloadIssue struct {
	Number      int             `json:"number"`
	PullRequest json.RawMessage `json:"pull_request"`
}

type payloadComment struct {
	ID        int64       `json:"id"`
	Body      string      `json:"body"`
	User      payloadUser `json:"user"`
	CreatedAt time.Time   `json:"created_at"`
}

type payloadGroup struct {
	HeadSHA string `json:"head_sha"`
	HeadRef string `json:"head_ref"`
	BaseSHA string `json:"base_sha"`
	BaseRef string `json:"base_ref"`
}

type payloadLabel struct {
	Name string `json:"name"`
}

type payloadReview struct {
	State string      `json:"state"`
	User  payloadUser `json:"user"`
}

// payloadChanges is a pull_request edited delivery's changes: a non-nil Base means the base branch changed.
type payloadChanges struct {
	Base *struct {
		Ref struct {
			From string `json:"from"`
		} `json:"ref"`
	} `json:"base"`
}
