package statuspage

import (
	"context"

	"github.com/catalogbot/catalogbot/bot/queue"
	"github.com/catalogbot/catalogbot/bot/store"
)

// Queue is the job queue as the pages read it (*queue.Queue).
type Queue interface {
	Depth(ctx context.Context) (map[queue.State]int, error)
	List(ctx context.Context, limit int, states ...queue.State) ([]*queue.Job, error)
	Get(ctx context.Context, id int64) (*queue.Job, error)
}

// Records are the bot's records the pages show (bot/store's, newest first), and the check run of a run
// (bot/checkrun's).
type Records interface {
	RecentRuns(ctx context.Context, limit int) ([]*store.Run, error)
	// RunByID is the run numbered id, or nil when there is none.
	RunByID(ctx context.Context, id int64) (*store.Run, error)
	// CheckRunID is the check run of a run (0 when it has none yet).
	CheckRunID(ctx context.Context, runID int64) (int64, error)
	RecentReleases(ctx context.Context, limit int) ([]*store.Release, error)
	RecentPromotions(ctx context.Context, limit int) ([]*store.Promotion, error)
}
