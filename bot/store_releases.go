package bot

import (
	"context"
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
func newReleaseRow() *releaseRow      { return &releaseRow{} }

var releaseTable = newAppPRTable("releases", "release", []string{"dir"}, []string{"image"}, newReleaseRow)

// startRelease returns the release of dir, recording it (pending, from push) when it is new, and counts an
// attempt.
func (s *store) startRelease(ctx context.Context, repo, dir, push string) (*releaseRow, error) {
	return releaseTable.start(ctx, s, &releaseRow{appPR: appPR{Repo: repo, Dir: dir, PushSHA: push}})
}

func (s *store) release(ctx context.Context, repo, dir string) (*releaseRow, error) {
	return releaseTable.get(ctx, s, &releaseRow{appPR: appPR{Repo: repo, Dir: dir}})
}

// saveRelease writes r's progress (every field but the key and the attempts).
func (s *store) saveRelease(ctx context.Context, r *releaseRow) error {
	return releaseTable.save(ctx, s, r)
}

// releaseOfPR is the release whose pull request is pr, or nil (appPRTable.ofPR).
func (s *store) releaseOfPR(ctx context.Context, repo string, pr int) (*releaseRow, error) {
	return releaseTable.ofPR(ctx, s, repo, pr)
}

// recentReleases are the releases most recently worked on, newest first.
func (s *store) recentReleases(ctx context.Context, limit int) ([]*releaseRow, error) {
	return releaseTable.recent(ctx, s, limit)
}
