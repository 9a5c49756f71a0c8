package pipeline

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/catalogbot/catalogbot/checks/graph"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/render/template"
	"github.com/catalogbot/catalogbot/report"
)

// How the number of catalogs changes a stage's report, and nothing else: every stage takes the same path
// over the affected catalogs (catalogs.go, percatalog.go, policy.go), then words its report here. A
// layout of one catalog names no catalog (the reports of single-catalog repositories); a layout of
// several names each, in spans, details and summaries.

// several tells whether the layout has several catalogs, whose reports name them.
func (a *affected) several() bool { return len(a.catalogs) > 1 }

// catalogName is c's name as a stage names it: "" in a layout of one catalog.
func (a *affected) catalogName(c config.Catalog) string {
	if a.several() {
		return c.Name
	}
	return ""
}

// catalogOrder is the layout's catalog names, in version order (for catalog spans).
func (a *affected) catalogOrder() []string {
	order := make([]string, 0, len(a.catalogs))
	for _, c := range a.catalogs {
		order = append(order, c.Name)
	}
	return order
}

// validateStage is the validate stage of the catalogs' results: with several catalogs in the layout,
// errors name their catalog, and the summary counts the catalogs with errors, each catalog's own summary
// in the details; a layout of one catalog has that catalog's summary.
func validateStage(a *affected, results []TreeResult) report.Stage {
	several := a.several()
	var ds []diag.Diagnostic
	var errs []error
	var details strings.Builder
	failed := 0
	st := report.Stage{}
	for _, r := range results {
		if r.Err != nil {
			if several {
				r.Err = fmt.Errorf("validating catalog %s: %w", r.Name, r.Err)
			}
			errs = append(errs, r.Err)
			fmt.Fprintf(&details, "- %s: %s\n", report.CodeSpan(r.Dir), report.Text(r.Err.Error()))
			failed++
			continue
		}
		if diag.HasErrors(r.Diagnostics) {
			failed++
		}
		ds = append(ds, r.Diagnostics...)
		st.Truncated = append(st.Truncated, r.Truncated...) // each dropped rule kept its first diagnostics: the status stands
		fmt.Fprintf(&details, "- %s: %s\n", report.CodeSpan(r.Dir), report.Text(r.Summary()))
	}
	joined := errors.Join(errs...)
	st.Status = report.StatusOf(ds, joined)
	if joined != nil {
		st.Err = joined.Error()
	}
	st.Diagnostics = ds
	if !several {
		if joined == nil {
			st.Summary = results[0].Summary()
		}
		return st
	}
	st.Summary = fmt.Sprintf("%s holding the touched packages validated, %d with errors", plural(len(results), "catalog"), failed)
	st.Details = "#### Catalogs\n\n" + details.String()
	return st
}

// graphStage is the graph stage of the catalogs' diffs (changed, in catalog order; all their
// diagnostics, of pairs catalogs compared). With several catalogs, identical diffs are described once
// under the list of their catalogs' names; with one, its diff is the details.
func graphStage(a *affected, pairs, channels int, changed []catalogDiff, all []diag.Diagnostic) report.Stage {
	if !a.several() {
		st := stageFromDiags(fmt.Sprintf("%s in %s", plural(channels, "changed channel"), plural(len(a.packages), "package")), all)
		if len(changed) == 1 {
			st.Details, st.Graphs = graph.GraphDetails(changed[0].head, changed[0].diffs)
		}
		return st
	}
	order := a.catalogOrder()
	groups := groupDiffs(changed)
	var b strings.Builder
	var graphs []report.UpgradeGraph
	for _, g := range groups {
		names := make([]string, 0, len(g))
		for _, d := range g {
			names = append(names, d.cat.Name)
		}
		fmt.Fprintf(&b, "#### %s\n\n", template.CatalogSpan(names, order))
		if len(g[0].diffs) == 0 {
			b.WriteString("No channel changed; released bundles changed (see the diagnostics).\n\n")
			continue
		}
		md, gs := graph.GraphDetails(g[0].head, g[0].diffs)
		b.WriteString(demote(md))
		graphs = append(graphs, gs...)
	}
	unchanged := pairs - len(changed)
	sum := fmt.Sprintf("%s in %s across %s", plural(channels, "changed channel"), plural(len(a.packages), "package"), plural(len(changed), "catalog"))
	if len(changed) > 0 {
		sum += fmt.Sprintf(" (%s)", plural(len(groups), "distinct diff"))
	}
	if unchanged > 0 {
		sum += fmt.Sprintf("; %d of the catalogs holding them unchanged", unchanged)
	}
	st := stageFromDiags(sum, all)
	st.Details, st.Graphs = b.String(), graphs
	return st
}

// imagesStage is the images stage of the checked uses' diagnostics ds (of images unique images in
// bundles bundles of pairs catalogs). With several catalogs, each diagnostic names the catalogs
// referencing its image.
func imagesStage(a *affected, uses []*imageUse, images, bundles, pairs int, ds []diag.Diagnostic) report.Stage {
	if !a.several() {
		return stageFromDiags(fmt.Sprintf("%d image references of %d new or changed bundles", len(uses), bundles), ds)
	}
	order := a.catalogOrder()
	for i := range ds {
		for _, u := range uses {
			if u.ref.File == ds[i].File && u.ref.Line == ds[i].Line && u.ref.Bundle == ds[i].Bundle && strings.Contains(ds[i].Message, u.ref.Image) {
				ds[i].Message += " (referenced by " + template.CatalogSpan(u.catalogs, order) + ")"
				break
			}
		}
	}
	return stageFromDiags(fmt.Sprintf("%s (%d uses) of %s in %s checked once each",
		plural(images, "image"), len(uses), plural(bundles, "new or changed bundle"), plural(pairs, "catalog")), ds)
}

// policySummary is the start of the policy stage's summary: rules rules on checked packages (bundles
// bundles) of targets catalogs; a layout of one catalog lists the touched packages instead.
func policySummary(a *affected, rules, checked, bundles, targets int) string {
	if !a.several() && targets == 1 {
		return fmt.Sprintf("%d policy rules on %s (%s): %s", rules, plural(checked, "package"), plural(bundles, "bundle"), joinSorted(slices.Clone(a.packages)))
	}
	return fmt.Sprintf("%d policy rules on %s (%s) in %s", rules, plural(checked, "package"), plural(bundles, "bundle"), plural(targets, "catalog"))
}
