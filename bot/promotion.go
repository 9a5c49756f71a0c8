package bot

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/bot/queue"
	"github.com/catalogbot/catalogbot/bot/store"
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
func promotionJob(event string, t PushTask, catalog, dir string) (*queue.Job, error) {
	j, err := newJob(event, kindPromotion, PromotionTask{PushTask: t, Catalog: catalog, Package: dir}, "", false, true)
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
func (jc *jobCtx) promotions(ctx context.Context, t PushTask, repo *gitrepo.Repo, before, after *object.Commit) error {
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
			j, err := promotionJob(jc.job.Event, t, cat, pk.Dir)
			if err != nil {
				return err
			}
			res, err := jc.b.enqueue(ctx, j, t, "")
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
func (jc *jobCtx) promotion(ctx context.Context, t PromotionTask) error {
	b := jc.b
	row, err := b.store.Promotions().Start(ctx, &store.Promotion{AppPR: store.AppPR{Repo: t.Repo, Dir: t.Package, PushSHA: t.After}, Catalog: t.Catalog})
	if err != nil {
		return err
	}
	row.Branch = promotionBranch(row.Dir, row.Catalog)
	return jc.runAppPRJob(ctx, &appPRJob{rec: row, save: func(ctx context.Context) error { return b.store.Promotions().Save(ctx, row) },
		name: "promotion of " + row.Dir + " into " + row.Catalog, noun: "promotion", done: "already promoted",
		attrs: []any{"catalog", row.Catalog, "package", row.Dir}, base: t.DefaultBranch,
		change: func(ctx context.Context, pc *pushCheckout) (*appPRChange, error) {
			return jc.promotionChange(ctx, pc, row)
		},
		// Labelled as upstream labels a promotion pull request: catalog-promotion/<strategy>.
		adopting: func(ctx context.Context, pr *ghclient.PullRequest) error {
			if err := jc.gh.AddLabel(ctx, jc.repo, pr.Number, promotionLabel(row.Strategy)); err != nil {
				return diag.InfraError(err)
			}
			return nil
		}})
}

// promotionChange computes the promotion of row at the pushed commit's checkout pc: the package's ci.yaml
// edit and its catalog, the commit's message and the pull request's title and body.
func (jc *jobCtx) promotionChange(ctx context.Context, pc *pushCheckout, row *store.Promotion) (*appPRChange, error) {
	prom, err := pipeline.ComputePromotion(ctx, pc.work, pc.cfg, pc.layout, row.Catalog, row.Dir, jc.remoteOptions())
	if err != nil {
		return nil, err
	}
	row.Strategy = string(prom.Package.Strategy)
	review := "It merges as the base branch's merge rules say."
	if prom.Package.ReviewNeeded {
		review = "Its `fbc.version_promotion_strategy` is `review-needed`: a maintainer must approve it before it merges."
	}
	return &appPRChange{files: prom.Files, message: fmt.Sprintf("%s\n\n%s\nPromoted-from: %s\n", prom.Package.Title, prom.Summary, row.PushSHA),
		title: prom.Package.Title, body: func(commit string) string {
			return fmt.Sprintf("Promotion of %s into the new catalog %s (added to `catalogs` in %s), by catalogbot.\n\n%s\n\n%s\n\n- promotion commit: %s\n",
				report.CodeSpan(row.Dir), report.CodeSpan(row.Catalog), row.PushSHA, prom.Summary, review, commit)
		}}, nil
}
