package bot

import (
	"context"

	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/bot/store"
	"github.com/catalogbot/catalogbot/pipeline"
)

// promotionGrant weighs pull request pr as the App's own promotion of a package into a new catalog, by the
// bot's record (only the promotion job writes a pull request number into the promotions table, for one
// it opened itself from a branch it pushed).
//
// reviewNeeded names the package when the record says its strategy was review-needed: a maintainer
// must approve the pull request, whoever else did, and whatever was pushed to it since.
//
// grant names the package and catalog when the promotion may merge without approvals, held to the
// release's proof: the base branch's configuration (the tip's) sets promotion.autoMerge, the recorded
// strategy was always and the package's ci.yaml in what merging lands still says always, the head is
// still the commit the App pushed (anyone pushing to the branch makes it an ordinary pull request), and
// what merging it lands changes only that package's ci.yaml and its directory in that catalog
// (pipeline.Change.PromotionOnly). A pull request of the same branch name or title is not in the record:
// it gets nothing.
func (jc *jobCtx) promotionGrant(ctx context.Context, br *baseRules, pr *ghclient.PullRequest) (grant pipeline.PromotionGrant, reviewNeeded string, err error) {
	if br.rules == nil {
		return grant, "", nil
	}
	row, err := jc.b.store.Promotions().OfPR(ctx, jc.target.Repo, pr.Number)
	if err != nil || row == nil {
		return grant, "", err
	}
	cfg := br.rules.Config
	pkg := cfg.Catalogs.DirPackage(row.Dir)
	if row.Strategy == pipeline.PromoteReviewNeeded {
		return grant, pkg, nil
	}
	if !cfg.Promotion.AutoMerge || row.Strategy != pipeline.PromoteAlways || row.State != store.AppPROpened || row.Commit == "" ||
		pr.HeadSHA != row.Commit || pr.HeadRef != row.Branch {
		return grant, "", nil
	}
	if !br.change.PromotedAlways(pkg) || !br.change.PromotionOnly(pkg, row.Catalog) {
		return grant, "", nil
	}
	return pipeline.PromotionGrant{Package: pkg, Catalog: row.Catalog}, "", nil
}
