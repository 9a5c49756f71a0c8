package bot

import (
	"context"

	"github.com/catalogbot/catalogbot/bot/queue"
)

// promotionSchema is the App's promotions of packages into a catalog a push added to the configuration:
// one row per repository, catalog and package directory (an App pull-request job table: store_apppr.go).
const promotionSchema = `
CREATE TABLE IF NOT EXISTS promotions (
	repo       TEXT    NOT NULL,
	catalog    TEXT    NOT NULL,
	dir        TEXT    NOT NULL,
	push_sha   TEXT    NOT NULL,
	strategy   TEXT    NOT NULL DEFAULT '',
	state      TEXT    NOT NULL,` + appPRProgressDDL + `
	PRIMARY KEY (repo, catalog, dir)
);
CREATE INDEX IF NOT EXISTS promotions_pr ON promotions(repo, pr);
`

// promotionRow is one package's promotion into one catalog.
type promotionRow struct {
	appPR
	Catalog string
	// Strategy is the package's fbc.version_promotion_strategy at the push's commit, once computed.
	Strategy string
}

func (r *promotionRow) record() *appPR  { return &r.appPR }
func (r *promotionRow) keys() []*string { return []*string{&r.Catalog, &r.Dir} }
func (r *promotionRow) own() []*string  { return []*string{&r.Strategy} }
func (r *promotionRow) subject() string { return "promotion of " + r.Dir + " into " + r.Catalog }

// newPromotionTable is the promotions table in db.
func newPromotionTable(db *queue.DB) *appPRTable[*promotionRow] {
	return newAppPRTable(db, "promotions", "promotion", []string{"catalog", "dir"}, []string{"strategy"},
		func() *promotionRow { return &promotionRow{} })
}

// promotion reads the promotion of dir into catalog.
func (s *store) promotion(ctx context.Context, repo, catalog, dir string) (*promotionRow, error) {
	return s.promotions.get(ctx, &promotionRow{appPR: appPR{Repo: repo, Dir: dir}, Catalog: catalog})
}

// recentPromotions are the promotions most recently worked on, newest first.
func (s *store) recentPromotions(ctx context.Context, limit int) ([]*promotionRow, error) {
	return s.promotions.recent(ctx, limit)
}
