package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/render/template"
)

// proveTemplates is init's proof of a template-driven configuration, read back from the file written:
// every mapping rendered offline from the committed catalogs and compared with them, every catalog
// validated; one line per package (what reproduces; what does not, and why) and one per catalog.
func proveTemplates(ctx context.Context, io streams, root string) error {
	setup, err := resolveRepo(root)
	if err != nil {
		return err
	}
	tcats := template.CatalogsOf(setup.layout.Catalogs)
	jobs, warnings, err := template.Plan(root, tcats, "")
	if err != nil {
		return err
	}
	store := template.NewStore("")
	if err := template.SeedFromCommitted(ctx, store, root, tcats, jobs); err != nil {
		return err
	}
	results := template.RenderJobs(ctx, root, jobs, &template.Images{Store: store, Offline: true}, 0, true, nil)
	fmt.Fprintf(io.out, "proof: %s rendered offline from the committed catalogs and compared with them\n", template.Plural(len(jobs), "template mapping"))
	type pkgProof struct {
		name       string
		total, ok  int
		reasons    []string // in first-seen order
		catalogsOf map[string][]string
	}
	var order []string
	byDir := map[string]*pkgProof{}
	reproduced := 0
	for _, r := range results {
		p := byDir[r.Job.Dir]
		if p == nil {
			p = &pkgProof{name: r.Job.Package, catalogsOf: map[string][]string{}}
			byDir[r.Job.Dir] = p
			order = append(order, r.Job.Dir)
		}
		p.total++
		why := mappingProblem(ctx, root, r)
		if why == "" {
			p.ok++
			reproduced++
			continue
		}
		if p.catalogsOf[why] == nil {
			p.reasons = append(p.reasons, why)
		}
		p.catalogsOf[why] = append(p.catalogsOf[why], r.Job.Catalog.Name)
	}
	whole := 0
	for _, dir := range order {
		p := byDir[dir]
		name := dir
		if p.name != dir {
			name = fmt.Sprintf("%s (package %s)", dir, p.name)
		}
		opm := ""
		if len(tcats) > 0 {
			opm = string(tcats[0].OPMVersionOf(dir))
			if opm == "" {
				opm = string(template.DefaultOPMVersion)
			}
		}
		if p.ok == p.total {
			whole++
			fmt.Fprintf(io.out, "  ok   %s: reproduces in %s (opm %s)\n", name, template.Plural(p.total, "catalog"), opm)
			continue
		}
		fmt.Fprintf(io.out, "  FAIL %s: reproduces in %d of %s (opm %s)\n", name, p.ok, template.Plural(p.total, "catalog"), opm)
		for _, why := range p.reasons {
			fmt.Fprintf(io.out, "       %s: %s\n", strings.Join(p.catalogsOf[why], ", "), why)
		}
	}
	for _, w := range warnings {
		fmt.Fprintf(io.out, "  note %s\n", w)
	}
	sc := &validateScope{root: root, catalogs: setup.layout.Catalogs, cfg: setup.cfg, layout: setup.layout, named: true}
	validated, err := pipeline.ValidateTree(ctx, pipeline.Tree{Root: root, Catalogs: sc.catalogs, Limits: (&limitFlags{}).limits(sc.cfg)})
	if err != nil {
		return err
	}
	for _, r := range validated {
		st := sc.stage(r.CatalogResult, "")
		fmt.Fprintf(io.out, "  validate %s: %s (%s)\n", r.Name, st.Status, st.Summary)
	}
	fmt.Fprintf(io.out, "%d of %s reproduce in every catalog they map to (%d of %s offline)\n",
		whole, template.Plural(len(order), "package"), reproduced, template.Plural(len(jobs), "mapping"))
	return nil
}

// mappingProblem is why a mapping's offline render is not its committed file ("" when it is).
func mappingProblem(ctx context.Context, root string, r template.Result) string {
	if r.Err != nil {
		msg, _, _ := strings.Cut(r.Err.Error(), "\n")
		return "does not render: " + msg
	}
	committed, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(r.Job.Output())))
	switch {
	case err != nil:
		return fmt.Sprintf("%s cannot be read: %v", r.Job.Output(), err)
	case string(committed) == string(r.Data):
		return ""
	case r.ReproducedBy != "":
		return fmt.Sprintf("the committed file is opm %s's render", r.ReproducedBy)
	}
	if why := template.DescribeDrift(ctx, committed, r.Data); why != "" {
		return "the committed file is no opm's render of the template: " + why
	}
	return "the committed file is not in opm's form (hand-written or reformatted): re-rendering changes its bytes, not its content"
}

// proveCatalog is init's proof of a one-catalog configuration: the catalog validates. A references
// config's render needs the images it names (index images, which no committed file holds), so it is
// left to render --check, and init says so.
func proveCatalog(ctx context.Context, io streams, root, dir string, refs bool) error {
	sc := &validateScope{root: root, catalogs: []config.Catalog{{Name: dir, Dir: dir}}, named: true}
	results, err := pipeline.ValidateTree(ctx, pipeline.Tree{Root: root, Catalogs: sc.catalogs})
	if err != nil {
		return err
	}
	for _, r := range results {
		st := sc.stage(r.CatalogResult, "")
		fmt.Fprintf(io.out, "proof: validate %s: %s (%s)\n", dir, st.Status, st.Summary)
	}
	if refs {
		fmt.Fprintf(io.out, "not proved offline: the references render from their index images; catalogbot render --check renders and compares them\n")
	}
	return nil
}
