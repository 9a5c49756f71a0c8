package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/filetree"
	"github.com/catalogbot/catalogbot/render"
	"github.com/catalogbot/catalogbot/render/promote"
	"github.com/catalogbot/catalogbot/render/template"
	"github.com/catalogbot/catalogbot/report"
)

// promoteOptions are what promote's command line says.
type promoteOptions struct {
	io   streams
	to   string
	repo repoFlags
	out  outputFlags
}

func newPromoteCmd(runF runner[promoteOptions]) *cobra.Command {
	o := &promoteOptions{}
	cmd := &cobra.Command{
		Use:   "promote --to <catalog> [--package <package>]",
		Short: "Promote packages into a new cluster version's catalog (their ci.yaml's fbc.version_promotion_strategy), then render it",
		Long: `promote adds a new catalog (a cluster version, such as v4.22) to the packages of a template-driven
repository, as community-operators-prod's FBC promotion does: every package whose ci.yaml maps the
catalog before it gets the new catalog in the catalog_names of that template (only that list changes),
and its template is rendered into <catalog>/<package>/catalog.yaml with the new catalog's migration level
and opm. fbc.version_promotion_strategy decides: never skips the package, always promotes it,
review-needed (the default) promotes it and says a maintainer of the package must review it.

The catalog must be one ` + config.ConfigFile + ` lists (catalogs:); add it there first. Without --package
every package is considered, and one that maps the catalog already, says never, or maps no template to
the catalog before is skipped; --package turns those into refusals. Refusals name their file and line
and nothing is written. The bundles come from the catalogs HEAD commits (or --seed-from), as render's:
every bundle a template names is in a catalog it renders into already. Docs: docs/release.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.io = streamsOf(cmd)
			return orDefault(runF, runPromote)(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.to, "to", "", "the new catalog (v4.22, or 4.22)")
	_ = cmd.MarkFlagRequired("to")
	cmd.Flags().StringVar(&o.repo.pkg, "package", "", "promote only this package (or its directory under operators/)")
	cmd.Flags().StringVar(&o.repo.repo, "repo", ".", "repository root")
	o.repo.addSeed(cmd)
	o.out.add(cmd)
	return cmd
}

func runPromote(ctx context.Context, o *promoteOptions) error {
	start := time.Now()
	setup, err := resolveRepo(o.repo.repo)
	if err != nil {
		return err
	}
	if !setup.cfg.MultiCatalog() {
		return diag.UsageError(fmt.Errorf("promote: %s lists no catalogs (catalogs: with a pattern or a list), so there is no catalog to promote into", config.ConfigFile))
	}
	cfg := promote.Config{File: config.ConfigFile}
	if setup.file != "" {
		if cfg.Data, err = os.ReadFile(setup.file); err != nil {
			return diag.UsageError(fmt.Errorf("reading %s: %w", config.ConfigFile, err))
		}
	}
	p, err := promote.Plan(o.repo.repo, template.CatalogsOf(setup.layout.Catalogs), o.to, o.repo.pkg, cfg)
	if err != nil {
		return err
	}
	st := report.Stage{Name: promote.Check, Diagnostics: p.Diagnostics, Status: report.Pass}
	rep := &report.Report{Title: "promote into " + p.Target.Name, Stages: []report.Stage{st}}
	if diag.HasErrors(p.Diagnostics) {
		rep.Stages[0].Status, rep.Stages[0].Summary = report.Fail, "promotion into "+p.Target.Name+" refused; nothing was written"
		return o.out.emit(o.io.out, rep)
	}
	planned := time.Since(start)
	var results []template.Result
	renderFailed := false
	if len(p.Packages) > 0 {
		jobs := p.Jobs()
		rst := renderAndWrite(ctx, o.repo, setup, jobs, nil, func(src template.Source) []template.Result {
			results = p.Render(ctx, src, render.DefaultConcurrency, o.io.err)
			return results
		})
		rst.Summary = fmt.Sprintf("%s rendered into %s", template.Plural(len(jobs), "package"), p.Target.Name)
		rep.Stages = append(rep.Stages, rst)
		renderFailed = rst.Err != "" // seeding, a registry or writing failed: which catalogs were written is unknown
	}
	// a package's ci.yaml maps the new catalog only once its catalog file is written
	unwritten := 0
	for i, pk := range p.Packages {
		if renderFailed || i >= len(results) || results[i].Err != nil {
			unwritten++
			continue
		}
		if err := filetree.WriteFileBytes(filepath.Join(o.repo.repo, filepath.FromSlash(pk.CI.File)), 0o644, pk.CI.After); err != nil {
			return fmt.Errorf("writing %s: %w", pk.CI.File, err)
		}
	}
	rep.Stages[0].Summary, rep.Stages[0].Details = promotionSummary(p)
	if unwritten > 0 {
		rep.Stages[0].Summary += fmt.Sprintf("; %s left as it was: its catalog did not render", template.Plural(unwritten, "ci.yaml"))
	}
	rep.Stages[0].Duration = planned
	rep.Outputs = promotionOutputs(p)
	return o.out.emit(o.io.out, rep)
}

// promotionSummary is the promote stage's line, and a markdown list of each promotion (what a pull
// request of it holds) and each package skipped.
func promotionSummary(p *promote.Promotion) (string, string) {
	review := 0
	var b strings.Builder
	for _, pk := range p.Packages {
		flag := ""
		if pk.ReviewNeeded {
			review++
			flag = " (review needed)"
		}
		fmt.Fprintf(&b, "- %s%s: %s\n", pk.Title, flag, strings.Join(pk.Files(), ", "))
	}
	for _, s := range p.Skipped {
		fmt.Fprintf(&b, "- %s skipped: %s\n", s.Dir, s.Reason)
	}
	summary := fmt.Sprintf("%s promoted from %s into %s (%d for a maintainer to review), %d skipped",
		template.Plural(len(p.Packages), "package"), p.Source.Name, p.Target.Name, review, len(p.Skipped))
	return summary, b.String()
}

// promotionOutputs are the promoted packages' directories (promoted) and those a maintainer must review
// (review_needed), space-separated.
func promotionOutputs(p *promote.Promotion) map[string]string {
	var all, review []string
	for _, pk := range p.Packages {
		all = append(all, pk.Dir)
		if pk.ReviewNeeded {
			review = append(review, pk.Dir)
		}
	}
	return map[string]string{"promoted": strings.Join(all, " "), "review_needed": strings.Join(review, " ")}
}
