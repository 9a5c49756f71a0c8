package bot

import (
	"context"

	"github.com/catalogbot/catalogbot/bot/store"
)

// pageRecords are the bot's records as the status pages read them (statuspage.Records): the store's, and
// the check run of a run from bot/checkrun.
type pageRecords struct {
	*store.Store
	b *Bot
}

func (p pageRecords) CheckRunID(ctx context.Context, runID int64) (int64, error) {
	_, id, err := p.b.checks.StateOf(ctx, runID)
	return id, err
}
