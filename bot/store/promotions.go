package store

import (
	"context"

	"github.com/catalogbot/catalogbot/bot/queue"
)

// promotionSchema is the App's promotions of packages into a catalog a push added to the configuration:
// one row per repository, catalog and package directory (an App pull-request job table: apppr.go).
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

// Promotion is one package's promotion into one catalog.
type Promotion struct {
	AppPR
	// Catalog is the catalog the package is promoted into (Dir is the package's directory).
	Catalog string
	// Strategy is the package's fbc.version_promotion_strategy at the push's commit, once computed.
	Strategy string
}

// Record is the promotion's AppPR.
func (r *Promotion) Record() *AppPR  { return &r.AppPR }
func (r *Promotion) keys() []*string { return []*string{&r.Catalog, &r.Dir} }
func (r *Promotion) own() []*string  { return []*string{&r.Strategy} }

// Subject names the promotion in errors: "promotion of <dir> into <catalog>".
func (r *Promotion) Subject() string { return "promotion of " + r.Dir + " into " + r.Catalog }

// newPromotionTable is the promotions table in db.
func newPromotionTable(db *queue.DB) *AppPRTable[*Promotion] {
	return newAppPRTable(db, "promotions", "promotion", []string{"catalog", "dir"}, []string{"strategy"},
		func() *Promotion { return &Promotion{} })
}

// Promotions is the promotions table: a promotion job starts, saves and finds its row there.
func (s *Store) Promotions() *AppPRTable[*Promotion] { return s.promotions }

// Promotion reads the promotion of dir into catalog.
func (s *Store) Promotion(ctx context.Context, repo, catalog, dir string) (*Promotion, error) {
	return s.promotions.Get(ctx, &Promotion{AppPR: AppPR{Repo: repo, Dir: dir}, Catalog: catalog})
}

// RecentPromotions are the limit promotions most recently worked on, newest first.
func (s *Store) RecentPromotions(ctx context.Context, limit int) ([]*Promotion, error) {
	return s.promotions.Recent(ctx, limit)
}
