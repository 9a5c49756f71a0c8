package bot

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/bot/gitcache"
	"github.com/catalogbot/catalogbot/bot/queue"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/report"
)

// kindPromotion promotes one package into a catalog a push added to the configuration: one pull request.
const kindPromotion = "promotion"

// promotionBranch is the branch of the promotion of the package in directory dir into catalog:
// catalogbot/promote/<dir>-<catalog>. Upstream's script names its branches
// review-promote-v<4.Y>-<dir>-<timestamp>; a name without the time is the same on every attempt, which is
// what finds an earlier attempt's branch and pull request.
func promotionBranch(dir, catalog string) string { return "catalogbot/promote/" + dir + "-" + catalog }

// promotionLabel is upstream's label of a promotion pull request: catalog-promotion/<strategy>.
func promotionLabel(strategy string) string { return "catalog-promotion/" + strategy }

// promotionJob is the job promoting the package in directory dir into catalog, from t's push. Its
// delivery names the repository, the catalog and the directory, so a redelivered push, or the same
// catalog added again, queues nothing twice.
func promotionJob(event string, t Task, catalog, dir string) (*queue.Job, error) {
	t.Catalog, t.Package = catalog, dir
	j, err := newJob(event, kindPromotion, t, "", false, true)
	if err != nil {
		return nil, err
	}
	j.Delivery = "promotion:" + strings.ToLower(t.Repo) + ":" + catalog + ":" + dir
	return j, nil
}

// promotions queues a promotion job for each package that `catalogbot promote --to <catalog>` would
// change, for each catalog the configuration at after lists and the one at before does not. Everything is
// read at after, the pushed commit (the default branch's tip): the configuration's catalogs, and each
// package's ci.yaml and strategy, so a push that adds a catalog and changes a package's strategy promotes
// as the pushed files say.
func (jc *jobCtx) promotions(ctx context.Context, repo *gitrepo.Repo, before, after *object.Commit) error {
	had, err := pipeline.ConfigAt(repo, before)
	if err != nil {
		jc.log.Info("not promoting: the configuration before the push does not parse", "err", err)
		return nil
	}
	cfg, err := pipeline.ConfigAt(repo, after)
	if err != nil {
		return diag.UsageError(err)
	}
	gained := pipeline.CatalogsGained(had, cfg)
	if len(gained) == 0 {
		return nil
	}
	layout, err := pipeline.LayoutAt(cfg, after)
	if err != nil {
		return diag.UsageError(err)
	}
	work, cleanup, err := repo.Checkout(ctx, after)
	if err != nil {
		return err
	}
	defer cleanup()
	for _, cat := range gained {
		p, err := pipeline.PlanPromotion(work, cfg, layout, cat, "")
		if err != nil {
			jc.log.Warn("not promoting", "catalog", cat, "err", err)
			continue
		}
		for _, d := range p.Diagnostics {
			jc.log.Warn("promotion refused", "catalog", cat, "diagnostic", d.String())
		}
		for _, pk := range p.Packages {
			j, err := promotionJob(jc.job.Event, jc.task, cat, pk.Dir)
			if err != nil {
				return err
			}
			res, err := jc.b.enqueue(ctx, j, jc.task, "")
			if err != nil {
				return fmt.Errorf("queue the promotion of %s into %s: %w", pk.Dir, cat, err)
			}
			jc.log.Info("promotion queued", "catalog", cat, "package", pk.Dir, "strategy", pk.Strategy, "job", res.ID, "duplicate", res.Duplicate)
		}
		jc.log.Info("promotion planned", "catalog", cat, "from", p.Source.Name, "packages", len(p.Packages), "skipped", len(p.Skipped))
	}
	return nil
}

// promotion promotes one package into one catalog: computes its ci.yaml edit and its catalog at the
// push's commit, commits that on the promotion branch and opens one pull request, which is then checked
// like any other. Each step is recorded (promotions table) before the next and looks for what an earlier
// attempt did first, as a release does.
func (jc *jobCtx) promotion(ctx context.Context) error {
	b, t := jc.b, jc.task
	row, err := b.store.startPromotion(ctx, t.Repo, t.Catalog, t.Package, t.After)
	if err != nil {
		return err
	}
	if row.State == releaseOpened {
		jc.log.Info("already promoted", "catalog", row.Catalog, "package", row.Dir, "pr", row.PR)
		return nil
	}
	err = jc.promotionSteps(ctx, row)
	if err == nil {
		return nil
	}
	return jc.settleAppPRJob(ctx, err, &row.State, &row.Error, func(ctx context.Context) error { return b.store.savePromotion(ctx, row) })
}

func (jc *jobCtx) promotionSteps(ctx context.Context, row *promotionRow) error {
	b, t := jc.b, jc.task
	row.Branch = promotionBranch(row.Dir, row.Catalog)
	// A pull request of the branch opened by an earlier attempt that stopped before recording it.
	if pr, err := jc.gh.FindPullRequest(ctx, jc.repo, row.Branch); err != nil {
		return diag.InfraError(err)
	} else if pr != nil {
		return jc.adoptPromotionPR(ctx, row, pr)
	}
	pc, err := jc.checkoutPush(ctx, row.PushSHA)
	if err != nil {
		return err
	}
	defer pc.cleanup()
	prom, err := pipeline.ComputePromotion(ctx, pc.work, pc.cfg, pc.layout, row.Catalog, row.Dir, jc.remoteOptions())
	if err != nil {
		return err
	}
	row.Strategy = string(prom.Package.Strategy)
	message := fmt.Sprintf("%s\n\n%s\nPromoted-from: %s\n", prom.Package.Title, prom.Summary, row.PushSHA)
	sha, err := gitcache.CommitFiles(pc.clone, row.PushSHA, prom.Files, jc.appSignature(), message, pc.commit.Committer.When)
	if err != nil {
		return fmt.Errorf("commit the promotion of %s into %s: %w", row.Dir, row.Catalog, err)
	}
	row.Commit = sha
	if err := b.store.savePromotion(ctx, row); err != nil {
		return err
	}
	subject := "promotion of " + row.Dir + " into " + row.Catalog
	if err := jc.pushAppBranch(ctx, pc.repo, subject, row.Branch, row.Commit); err != nil {
		return err
	}
	review := "It merges as the base branch's merge rules say."
	if prom.Package.ReviewNeeded {
		review = "Its `fbc.version_promotion_strategy` is `review-needed`: a maintainer must approve it before it merges."
	}
	body := fmt.Sprintf("Promotion of %s into the new catalog %s (added to `catalogs` in %s), by catalogbot.\n\n%s\n\n%s\n\n- promotion commit: %s\n",
		report.CodeSpan(row.Dir), report.CodeSpan(row.Catalog), row.PushSHA, prom.Summary, review, sha)
	pr, err := jc.openAppPR(ctx, ghclient.NewPullRequest{Title: prom.Package.Title, Body: body, Head: row.Branch, Base: t.DefaultBranch})
	if err != nil {
		return err
	}
	return jc.adoptPromotionPR(ctx, row, pr)
}

// adoptPromotionPR records pr as the promotion's pull request when its head is the promotion commit,
// labels it as upstream does (catalog-promotion/<strategy>), and queues its check. A pull request of the
// branch whose head is another commit is not the App's promotion: the promotion fails, naming it.
func (jc *jobCtx) adoptPromotionPR(ctx context.Context, row *promotionRow, pr *ghclient.PullRequest) error {
	if err := foreignAppPR("promotion of "+row.Dir+" into "+row.Catalog, row.Branch, row.Commit, pr); err != nil {
		return err
	}
	if err := jc.gh.AddLabel(ctx, jc.repo, pr.Number, promotionLabel(row.Strategy)); err != nil {
		return diag.InfraError(err)
	}
	row.PR, row.State, row.Error = pr.Number, releaseOpened, ""
	if err := jc.b.store.savePromotion(ctx, row); err != nil {
		return err
	}
	jc.log.Info("promotion pull request opened", "catalog", row.Catalog, "package", row.Dir, "pr", pr.Number, "head", pr.HeadSHA)
	return jc.queueAppPRCheck(ctx, pr, "promotion pull request opened", "promotion-check")
}
