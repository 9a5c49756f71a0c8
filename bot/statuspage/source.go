package statuspage

import (
	"context"
	"time"

	"github.com/catalogbot/catalogbot/bot/queue"
	"github.com/catalogbot/catalogbot/report"
)

// Queue is the job queue as the pages read it (*queue.Queue).
type Queue interface {
	Depth(ctx context.Context) (map[queue.State]int, error)
	List(ctx context.Context, limit int, states ...queue.State) ([]*queue.Job, error)
	Get(ctx context.Context, id int64) (*queue.Job, error)
}

// Records are the bot's records the pages show, newest first.
type Records interface {
	RecentRuns(ctx context.Context, limit int) ([]*Run, error)
	// Run is the run numbered id, or nil when there is none.
	Run(ctx context.Context, id int64) (*Run, error)
	// CheckRunID is the check run of a run (0 when it has none yet).
	CheckRunID(ctx context.Context, runID int64) (int64, error)
	RecentReleases(ctx context.Context, limit int) ([]*Release, error)
	RecentPromotions(ctx context.Context, limit int) ([]*Promotion, error)
}

// Run is one recorded execution (a check, a merge group, a publish) as the pages show it.
type Run struct {
	ID, JobID                      int64
	Kind, Repo                     string
	PR                             int
	HeadSHA, BaseRef, BaseSHA, Tip string
	Status, Conclusion, Log        string
	CheckRunID                     int64
	Approvers                      []string
	Report                         *report.Report
	Started, Finished              time.Time
}

// AppPR is the progress of one of the App's pull-request jobs (a release or a promotion).
type AppPR struct {
	Repo, Dir, PushSHA, State string
	PR, Attempts              int
	Error                     string
	Updated                   time.Time
}

// Release is the App's release of a merged bundle directory; Image the bundle image, once pushed.
type Release struct {
	AppPR
	Image string
}

// Promotion is the App's promotion of a package into a new catalog under its ci.yaml's strategy.
type Promotion struct {
	AppPR
	Catalog, Strategy string
}
