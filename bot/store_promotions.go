package bot

import (
	"context"
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
func newPromotionRow() *promotionRow    { return &promotionRow{} }

var promotionTable = newAppPRTable("promotions", "promotion", []string{"catalog", "dir"}, []string{"strategy"}, newPromotionRow)

// startPromotion returns the promotion of dir into catalog, recording it (pending, from push) when it is
// new, and counts an attempt.
func (s *store) startPromotion(ctx context.Context, repo, catalog, dir, push string) (*promotionRow, error) {
	return promotionTable.start(ctx, s, &promotionRow{appPR: appPR{Repo: repo, Dir: dir, PushSHA: push}, Catalog: catalog})
}

func (s *store) promotion(ctx context.Context, repo, catalog, dir string) (*promotionRow, error) {
	return promotionTable.get(ctx, s, &promotionRow{appPR: appPR{Repo: repo, Dir: dir}, Catalog: catalog})
}

// savePromotion writes r's progress (every field but the key and the attempts).
func (s *store) savePromotion(ctx context.Context, r *promotionRow) error {
	return promotionTable.save(ctx, s, r)
}

// promotionOfPR is the promotion whose pull request is pr, or nil (appPRTable.ofPR).
func (s *store) promotionOfPR(ctx context.Context, repo string, pr int) (*promotionRow, error) {
	return promotionTable.ofPR(ctx, s, repo, pr)
}

// recentPromotions are the promotions most recently worked on, newest first.
func (s *store) recentPromotions(ctx context.Context, limit int) ([]*promotionRow, error) {
	return promotionTable.recent(ctx, s, limit)
}
