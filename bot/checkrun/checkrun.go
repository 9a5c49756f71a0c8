// Package checkrun owns the bot's check runs: it is the only code that creates or updates one, and the
// compiler holds it (ghclient.GitHub has no check run calls; the Checks API is this package's internal
// checksapi). Each run of the bot (a check of one pull request head, or of a merge group) has at most one
// check run, whose state lives in the check_runs table and moves only forward, each move a
// compare-and-set:
//
//	queued ──> in_progress ──> completed
//	   │            │
//	   └────────────┴────────> completed or superseded (settled: cancelled, failed for good, past its deadline)
//
// A write to GitHub follows a move that succeeded, so of two writers racing for a run (an announcer and a
// worker, two replicas, a stale attempt and its successor) one writes and the other stands down. Creation
// is idempotent: a create is recorded as started before it is sent, and a writer finding a started create
// that never recorded its check run (the process died, the answer was lost) finds the check run again by
// its external ID before creating one. A create holds a lease while in flight, and its requests are cut
// before the lease runs out (a create waiting for a rate limit's reset is never sent once another writer may
// have taken over).
package checkrun

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/catalogbot/catalogbot/bot/checkrun/internal/checksapi"
	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/bot/queue"
	"github.com/catalogbot/catalogbot/report"
)

// State is where a check run is in its life.
type State string

const (
	// Queued: announced when its job was queued; no worker has started it.
	Queued State = "queued"
	// InProgress: a worker's attempt (Ref.Attempt) runs the check.
	InProgress State = "in_progress"
	// Completed: the outcome is posted (a conclusion other than cancelled).
	Completed State = "completed"
	// Superseded: closed as cancelled (a newer push, a closed pull request).
	Superseded State = "superseded"
)

// ErrNotOwner: the run moved on without the caller (settled, superseded, or started by a newer attempt);
// the caller must not write its check run.
var ErrNotOwner = errors.New("the check run is no longer this attempt's")

// Ref names one run's check run and the attempt acting on it.
type Ref struct {
	// Run is the bot's run ID: the check run's external ID derives from it (ExternalID).
	Run     int64
	Repo    ghclient.Repo
	HeadSHA string
	// DetailsURL is the run's status page.
	DetailsURL string
	// Attempt is the job attempt acting (0 for announcers and settlers, who never own a run).
	Attempt int
}

// ExternalID is the external ID of a run's check run: what finds it again after a crash.
func ExternalID(run int64) string { return fmt.Sprintf("catalogbot-run-%d", run) }

// Owner writes check runs named Name. One per process; several processes may share the table.
type Owner struct {
	db   *queue.DB
	name string
	// createLease is how long a create in flight keeps other writers from creating (they wait for it);
	// past it, a writer looks the check run up by external ID and creates it if missing.
	createLease time.Duration

	// checks is a client's Checks API (checksapi.Of; a test's fake): the callers hand the owner their
	// ghclient.GitHub, which has no check run calls.
	checks func(ghclient.GitHub) (checksapi.API, error)

	// Broadcast, when set, tells the other processes sharing the table that a create ended (they call
	// Wake): their writers waiting for it go on at once rather than when its lease runs out.
	Broadcast func(ctx context.Context) error

	mu      sync.Mutex
	changed chan struct{} // closed and replaced when a create ends
}

const schema = `
CREATE TABLE IF NOT EXISTS check_runs (
	run_id         INTEGER NOT NULL PRIMARY KEY,
	head_sha       TEXT    NOT NULL,
	state          TEXT    NOT NULL,
	attempt        INTEGER NOT NULL DEFAULT 0,
	check_run_id   INTEGER NOT NULL DEFAULT 0,
	create_started INTEGER NOT NULL DEFAULT 0,
	creating_until INTEGER NOT NULL DEFAULT 0,
	conclusion     TEXT    NOT NULL DEFAULT '',
	title          TEXT    NOT NULL DEFAULT '',
	summary        TEXT    NOT NULL DEFAULT ''
);
`

// DefaultCreateLease bounds a create request in flight (the client's own retries included).
const DefaultCreateLease = 30 * time.Second

// New prepares the check_runs table on db. createLease <= 0 means DefaultCreateLease.
func New(ctx context.Context, db *queue.DB, name string, createLease time.Duration) (*Owner, error) {
	if err := db.CreateTables(ctx, "the check runs table", schema); err != nil {
		return nil, err
	}
	if createLease <= 0 {
		createLease = DefaultCreateLease
	}
	return &Owner{db: db, name: name, createLease: createLease, checks: checksapi.Of, changed: make(chan struct{})}, nil
}

// Name is the check runs' name.
func (o *Owner) Name() string { return o.name }

// Output is a completed check run's content: report.CheckRun's rendering.
type Output = report.CheckRunOutput

type reportAnnotation = report.Annotation

// annotationsPerRequest is GitHub's limit of annotations per check run create or update request.
const annotationsPerRequest = 50
