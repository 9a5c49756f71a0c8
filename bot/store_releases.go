package bot

import (
	"context"

	"github.com/catalogbot/catalogbot/bot/queue"
)

// releaseSchema is the App's releases of merged bundle directories: one row per repository and bundle
// directory (an App pull-request job table: store_apppr.go).
const releaseSchema = `
CREATE TABLE IF NOT EXISTS releases (
	repo       TEXT    NOT NULL,
	dir        TEXT    NOT NULL,
	push_sha   TEXT    NOT NULL,
	state      TEXT    NOT NULL,
	image      TEXT    NOT NULL DEFAULT '',` + appPRProgressDDL + `
	PRIMARY KEY (repo, dir)
);
CREATE INDEX IF NOT EXISTS releases_pr ON releases(repo, pr);
`

// releaseRow is one bundle directory's release.
type releaseRow struct {
	appPR
	// Image is the bundle image by digest, once pushed.
	Image string
}

func (r *releaseRow) record() *appPR  { return &r.appPR }
func (r *releaseRow) keys() []*string { return []*string{&r.Dir} }
func (r *releaseRow) own() []*string  { return []*string{&r.Image} }
func (r *releaseRow) subject() string { return "release of " + r.Dir }

// newReleaseTable is the releases table in db.
func newReleaseTable(db *queue.DB) *appPRTable[*releaseRow] {
	return newAppPRTable(db, "releases", "release", []string{"dir"}, []string{"image"}, func() *releaseRow { return &releaseRow{} })
}

// release reads the release of dir.
func (s *store) release(ctx context.Context, repo, dir string) (*releaseRow, error) {
	return s.releases.get(ctx, &releaseRow{appPR: appPR{Repo: repo, Dir: dir}})
}

// recentReleases are the releases most recently worked on, newest first.
func (s *store) recentReleases(ctx context.Context, limit int) ([]*releaseRow, error) {
	return s.releases.recent(ctx, limit)
}
