package store

import (
	"context"

	"github.com/catalogbot/catalogbot/bot/queue"
)

// releaseSchema is the App's releases of merged bundle directories: one row per repository and bundle
// directory (an App pull-request job table: apppr.go).
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

// Release is one bundle directory's release.
type Release struct {
	AppPR
	// Image is the bundle image by digest, once pushed.
	Image string
}

// Record is the release's AppPR.
func (r *Release) Record() *AppPR  { return &r.AppPR }
func (r *Release) keys() []*string { return []*string{&r.Dir} }
func (r *Release) own() []*string  { return []*string{&r.Image} }

// Subject names the release in errors: "release of <dir>".
func (r *Release) Subject() string { return "release of " + r.Dir }

// newReleaseTable is the releases table in db.
func newReleaseTable(db *queue.DB) *AppPRTable[*Release] {
	return newAppPRTable(db, "releases", "release", []string{"dir"}, []string{"image"}, func() *Release { return &Release{} })
}

// Releases is the releases table: a release job starts, saves and finds its row there.
func (s *Store) Releases() *AppPRTable[*Release] { return s.releases }

// Release reads the release of dir.
func (s *Store) Release(ctx context.Context, repo, dir string) (*Release, error) {
	return s.releases.Get(ctx, &Release{AppPR: AppPR{Repo: repo, Dir: dir}})
}

// RecentReleases are the limit releases most recently worked on, newest first.
func (s *Store) RecentReleases(ctx context.Context, limit int) ([]*Release, error) {
	return s.releases.Recent(ctx, limit)
}
