package bot

import (
	"context"
	"path"

	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/bot/store"
)

// releaseGrant names the package when pull request pr is the App's own release of it and the base
// branch's configuration (the tip's, as every rule) sets release.autoMerge: the App recorded opening this
// pull request (only the release job writes a pull request number into the releases table, for one it
// opened itself from a branch it pushed), its head is still the release commit the App pushed (anyone
// pushing to the branch makes it an ordinary pull request), and what merging it lands changes only that
// package's templates and catalogs (pipeline.Change.ReleaseOnly). A pull request of
// the same branch name or title, or one from a fork, is not in the record: it gets nothing.
func (jc *jobCtx) releaseGrant(ctx context.Context, br *baseRules, pr *ghclient.PullRequest) (string, error) {
	if br.rules == nil || !br.rules.Config.Release.AutoMerge {
		return "", nil
	}
	row, err := jc.b.store.Releases().OfPR(ctx, jc.target.Repo, pr.Number)
	if err != nil || row == nil {
		return "", err
	}
	if row.State != store.AppPROpened || row.Commit == "" || pr.HeadSHA != row.Commit || pr.HeadRef != row.Branch {
		return "", nil
	}
	pkg := path.Base(path.Dir(row.Dir))
	if !br.change.ReleaseOnly(pkg) {
		return "", nil
	}
	return pkg, nil
}
