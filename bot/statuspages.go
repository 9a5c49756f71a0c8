package bot

import (
	"context"

	"github.com/catalogbot/catalogbot/bot/statuspage"
	"github.com/catalogbot/catalogbot/bot/store"
)

// pageRecords are the bot's records as the status pages read them (statuspage.Records).
type pageRecords struct{ b *Bot }

func (p pageRecords) RecentRuns(ctx context.Context, limit int) ([]*statuspage.Run, error) {
	runs, err := p.b.store.RecentRuns(ctx, limit)
	return pageRows(runs, pageRun), err
}

func (p pageRecords) Run(ctx context.Context, id int64) (*statuspage.Run, error) {
	r, err := p.b.store.RunByID(ctx, id)
	if r == nil || err != nil {
		return nil, err
	}
	return pageRun(r), nil
}

func (p pageRecords) CheckRunID(ctx context.Context, runID int64) (int64, error) {
	_, id, err := p.b.checks.StateOf(ctx, runID)
	return id, err
}

func (p pageRecords) RecentReleases(ctx context.Context, limit int) ([]*statuspage.Release, error) {
	rows, err := p.b.store.RecentReleases(ctx, limit)
	return pageRows(rows, func(r *store.Release) *statuspage.Release {
		return &statuspage.Release{AppPR: pageAppPR(&r.AppPR), Image: r.Image}
	}), err
}

func (p pageRecords) RecentPromotions(ctx context.Context, limit int) ([]*statuspage.Promotion, error) {
	rows, err := p.b.store.RecentPromotions(ctx, limit)
	return pageRows(rows, func(r *store.Promotion) *statuspage.Promotion {
		return &statuspage.Promotion{AppPR: pageAppPR(&r.AppPR), Catalog: r.Catalog, Strategy: r.Strategy}
	}), err
}

// pageRows converts rows for the pages.
func pageRows[R, P any](rows []R, page func(R) P) []P {
	out := make([]P, len(rows))
	for i, r := range rows {
		out[i] = page(r)
	}
	return out
}

// pageRun is the run as the status pages show it.
func pageRun(r *store.Run) *statuspage.Run {
	return &statuspage.Run{ID: r.ID, JobID: r.JobID, Kind: r.Kind, Repo: r.Repo, PR: r.PR, HeadSHA: r.HeadSHA, BaseRef: r.BaseRef,
		BaseSHA: r.BaseSHA, Tip: r.Tip, Status: r.Status, Conclusion: r.Conclusion, Log: r.Log, Approvers: r.Approvers,
		Report: r.Report, Started: r.Started, Finished: r.Finished}
}

// pageAppPR is the App pull-request job as the status pages show it.
func pageAppPR(a *store.AppPR) statuspage.AppPR {
	return statuspage.AppPR{Repo: a.Repo, Dir: a.Dir, PushSHA: a.PushSHA, State: a.State, PR: a.PR, Attempts: a.Attempts,
		Error: a.Error, Updated: a.Updated}
}
