package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/build"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/render"
	"github.com/catalogbot/catalogbot/render/template"
	"github.com/catalogbot/catalogbot/report"
)

// Publishing the catalogs of a layout (a single-catalog repository is a layout of one): in a
// template-driven layout the templates of the packages the push touched are rendered (the drift gate,
// the bundle cache seeded from the default branch's committed catalogs before the push and at the pushed
// commit), and every catalog whose directory differs from the commit its tag holds is validated, built
// and pushed to its own image (by digest, then the tag, never backwards), publishConcurrency at a time. A
// catalog that drifts from its templates or does not validate is not published; the others still are.

// publishConcurrency bounds the catalogs built and pushed at once.
const publishConcurrency = 3

// catalogOutcome is one catalog's publish.
type catalogOutcome struct {
	cat    config.Catalog
	st     report.Stage
	digest string
}

// publishOne publishes one catalog unless it drifted from its templates or is what its tag holds.
func publishOne(ctx context.Context, repo *gitrepo.Repo, plan *PublishPlan, tree string, c config.Catalog, drifted bool, remoteOpts []remote.Option) (report.Stage, string) {
	switch {
	case c.Image == "":
		return report.Stage{Status: report.Skipped, Summary: "no image configured"}, ""
	case drifted:
		return report.Stage{Status: report.Fail, Summary: "not published: its committed render differs from its templates (see the render stage)"}, ""
	}
	bopts := build.Options{Base: plan.Config.Publish.Base, Platforms: plan.Platforms, RemoteOptions: remoteOpts}
	if rev, found, err := TagRevision(ctx, c.Image, bopts); err != nil {
		return stageFromErr(err), ""
	} else if found && rev != "" {
		if same, err := sameDir(repo, rev, plan.Commit, c.Dir); err == nil && same && sameBuild(repo, rev, plan.Config) {
			if held, err := tagsHold(ctx, c.Tags, rev, bopts); err != nil {
				return stageFromErr(err), ""
			} else if held {
				refs, verb := append([]string{c.Image}, c.Tags...), " holds"
				if len(refs) > 1 {
					verb = " hold"
				}
				return report.Stage{Status: report.Skipped, Summary: "unchanged since " + short(rev) + ", which " + strings.Join(refs, ", ") + verb}, ""
			}
		}
	}
	dir := filepath.Join(tree, filepath.FromSlash(c.Dir))
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return report.Stage{Status: report.Skipped, Summary: "no directory " + c.Dir + " at " + short(plan.Commit.Hash.String())}, ""
	}
	return Publish(ctx, PublishInput{CatalogDir: dir, Dir: c.Dir, Target: c.Image, Tags: c.Tags, Repo: repo, Commit: plan.Commit, Build: bopts})
}

// tagsHold tells whether every one of tags holds the image built from revision rev (a tag added to the
// configuration since, or one left behind, is pushed again).
func tagsHold(ctx context.Context, tags []string, rev string, opts build.Options) (bool, error) {
	for _, t := range tags {
		held, found, err := TagRevision(ctx, t, opts)
		if err != nil || !found || held != rev {
			return false, err
		}
	}
	return true, nil
}

// sameBuild tells whether the image built at revision rev used the build settings of cfg (publish.base
// and publish.platforms): when they changed, every catalog is rebuilt.
func sameBuild(repo *gitrepo.Repo, rev string, cfg *config.Config) bool {
	held, err := repo.Resolve(rev)
	if err != nil {
		return false
	}
	old, err := ConfigAt(repo, held)
	return err == nil && old.Publish.Base == cfg.Publish.Base && slices.Equal(old.Publish.Platforms, cfg.Publish.Platforms)
}

// sameDir tells whether dir has the same git tree at revision rev as at commit c.
func sameDir(repo *gitrepo.Repo, rev string, c *object.Commit, dir string) (bool, error) {
	held, err := repo.Resolve(rev)
	if err != nil {
		return false, err
	}
	hash := func(c *object.Commit) (string, error) {
		t, err := c.Tree()
		if err != nil {
			return "", err
		}
		sub, err := t.Tree(path.Clean(dir))
		if err != nil {
			return "", err
		}
		return sub.Hash.String(), nil
	}
	a, err := hash(held)
	if err != nil {
		return false, err
	}
	b, err := hash(c)
	return err == nil && a == b, err
}

// publishSummary is the one publish stage of every catalog: its status the worst of theirs, its details
// one line per catalog, the catalogs that were pushed, unchanged or failed named as spans. A layout of one
// catalog has that catalog's stage.
func publishSummary(outcomes []catalogOutcome) report.Stage {
	if len(outcomes) == 1 {
		st := outcomes[0].st
		st.Name = "publish"
		st.Details += catalogSourceDetails(outcomes)
		return st
	}
	st := report.Stage{Name: "publish", Status: report.Skipped}
	var order, pushed, unchanged, failed []string
	var errs []string
	var details strings.Builder
	details.WriteString("#### Catalogs\n\n")
	rank := map[report.Status]int{report.Skipped: 0, report.Pass: 1, report.Fail: 2, report.Error: 3}
	for _, o := range outcomes {
		order = append(order, o.cat.Name)
		switch {
		case o.digest != "":
			pushed = append(pushed, o.cat.Name)
		case o.st.Status == report.Skipped:
			unchanged = append(unchanged, o.cat.Name)
		default:
			failed = append(failed, o.cat.Name)
		}
		if rank[o.st.Status] > rank[st.Status] {
			st.Status = o.st.Status
		}
		line := o.st.Summary
		if o.st.Err != "" {
			line = strings.TrimSpace(line + " " + o.st.Err)
			errs = append(errs, o.cat.Name+": "+o.st.Err)
		}
		fmt.Fprintf(&details, "- %s → %s: %s\n", report.CodeSpan(o.cat.Name), report.CodeSpan(o.cat.Image), report.Text(line))
		st.Diagnostics = append(st.Diagnostics, o.st.Diagnostics...)
	}
	var parts []string
	if len(pushed) > 0 {
		parts = append(parts, "pushed "+template.CatalogSpan(pushed, order))
	}
	if len(failed) > 0 {
		parts = append(parts, "not published: "+template.CatalogSpan(failed, order))
	}
	if len(unchanged) > 0 {
		parts = append(parts, fmt.Sprintf("%d unchanged", len(unchanged)))
	}
	st.Summary = fmt.Sprintf("%s: %s", plural(len(outcomes), "catalog"), strings.Join(parts, "; "))
	st.Err = strings.Join(errs, "; ")
	st.Details = details.String() + catalogSourceDetails(outcomes)
	return st
}

// catalogSourceDetails prints the CatalogSource that follows the catalogs' Kubernetes-version tags
// (CatalogSourceDetails) for the outcomes' catalogs.
func catalogSourceDetails(outcomes []catalogOutcome) string {
	cats := make([]config.Catalog, len(outcomes))
	for i, o := range outcomes {
		cats[i] = o.cat
	}
	return CatalogSourceDetails(cats)
}

// CatalogSourceDetails is CatalogSources as a section of a publish stage's details; "" when no catalog
// has a tag a cluster follows.
func CatalogSourceDetails(cats []config.Catalog) string {
	cs := CatalogSources(cats)
	if cs == "" {
		return ""
	}
	return "\n#### CatalogSource\n\nA CatalogSource that follows the cluster's Kubernetes version (olm.catalogImageTemplate):\n\n```yaml\n" + cs + "```\n"
}

// renderForPublish renders the templates of the packages the push touched (since plan.Before, else the
// commit's first parent; every package when there is neither) with the bundle cache seeded from the
// committed catalogs of that revision and of the pushed commit (the default branch: trusted), and compares them with the committed catalogs. drifted names
// the catalogs whose committed render differs; with publish.commitRendered, rd is set to the rendered
// catalogs (rd.Path replaced by rd.Dir) when rendering succeeded.
func renderForPublish(ctx context.Context, repo *gitrepo.Repo, plan *PublishPlan, tree string, cats []config.Catalog,
	remoteOpts []remote.Option, rd *Rendered) (report.Stage, map[string]bool, error) {
	st := report.Stage{Name: "render", Status: report.Skipped, Summary: "no template of a touched package"}
	drifted := map[string]bool{}
	since := plan.Before
	if since == nil && plan.Commit.NumParents() > 0 {
		p, err := plan.Commit.Parent(0)
		if err != nil {
			return st, nil, fmt.Errorf("parent of %s: %w", short(plan.Commit.Hash.String()), err)
		}
		since = p
	}
	layout := &Layout{Catalogs: cats, Templates: true}
	var pkgs []string
	if since != nil {
		changed, err := repo.Changed(ctx, since, plan.Commit)
		if err != nil {
			return st, nil, err
		}
		for _, p := range changed {
			if pkg, ok := layout.packageDir(p); ok && !slices.Contains(pkgs, pkg) {
				pkgs = append(pkgs, pkg)
			}
		}
	} else {
		entries, err := os.ReadDir(filepath.Join(tree, template.OperatorsDir))
		if err != nil && !os.IsNotExist(err) {
			return st, nil, err
		}
		for _, e := range entries {
			if e.IsDir() {
				pkgs = append(pkgs, e.Name())
			}
		}
	}
	slices.Sort(pkgs)
	tcats := template.CatalogsOf(cats)
	var jobs []template.Job
	var ds []diag.Diagnostic
	for _, p := range pkgs {
		j, _, err := template.Plan(tree, tcats, p)
		switch {
		case err == nil:
			jobs = append(jobs, j...)
		case !isNotExist(err):
			ds = append(ds, diag.Diagnostic{Severity: diag.Error, Check: template.Check, Rule: "template-mapping",
				File: path.Join(template.OperatorsDir, p, template.CIFile), Package: p, Message: err.Error()})
		}
	}
	if len(jobs) == 0 && len(ds) == 0 {
		return st, drifted, nil
	}
	// The default branch is trusted (what reaches it passed the pull request gate, or a maintainer pushed
	// it): its committed catalogs, before the push and at the pushed commit, seed the bundle cache.
	store := template.NewStore("")
	for _, rev := range []*object.Commit{since, plan.Commit} {
		if rev == nil {
			continue
		}
		seedFS, err := repo.TreeFS(rev, "", func(p string) bool { // the touched packages' committed catalogs only
			pkg, ok := layout.packageDir(p)
			return ok && !strings.HasPrefix(p, template.OperatorsDir+"/") && slices.Contains(pkgs, pkg)
		})
		if err != nil {
			return st, nil, err
		}
		if err := template.SeedFromFS(ctx, store, seedFS, tcats, jobs); err != nil {
			return st, nil, fmt.Errorf("seeding the bundle cache from %s: %w", short(rev.Hash.String()), err)
		}
	}
	pull, err := render.NewBundleImages(render.Options{RemoteOptions: remoteOpts, AllowedRegistries: plan.Config.Images.AllowedRegistries})
	if err != nil {
		return st, nil, err
	}
	results := template.RenderJobs(ctx, tree, jobs, &template.Images{Store: store, Pull: pull}, 0, false, nil)
	ds = append(ds, template.Diagnostics(tree, results, true)...)
	renderFailed := false // a mapping or template error: nothing is committed back
	for _, d := range ds {
		hit := false
		for _, c := range cats {
			if strings.HasPrefix(d.File, path.Clean(c.Dir)+"/") || strings.Contains(d.Message, "catalog "+c.Name+":") {
				drifted[c.Name], hit = true, true
			}
		}
		if !hit { // a ci.yaml that does not say where it renders: no catalog is known good
			for _, c := range cats {
				drifted[c.Name] = true
			}
		}
		if d.Rule != "render-drift" {
			renderFailed = true
		}
	}
	st = stageFromDiags(fmt.Sprintf("%s of %s rendered and compared with the committed catalogs", plural(len(jobs), "template mapping"), plural(len(pkgs), "touched package")), ds)
	st.Name = "render"
	if len(drifted) > 0 && !renderFailed && plan.Config.Publish.CommitRendered {
		if err := stageRendered(tree, cats, results, rd); err != nil {
			return st, nil, err
		}
	}
	return st, drifted, nil
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// stageRendered copies the catalogs' parent directory of the checkout into a temporary directory with
// every render written over its committed file: what the bot commits back (rd.Path replaced by rd.Dir).
func stageRendered(tree string, cats []config.Catalog, results []template.Result, rd *Rendered) error {
	parent := path.Dir(path.Clean(cats[0].Dir))
	for _, c := range cats[1:] {
		if path.Dir(path.Clean(c.Dir)) != parent {
			return nil // catalogs under different parents: not committed back
		}
	}
	if parent == "." {
		return nil
	}
	tmp, err := os.MkdirTemp("", "catalogbot-rendered-")
	if err != nil {
		return err
	}
	dst := filepath.Join(tmp, filepath.Base(parent))
	src := filepath.Join(tree, filepath.FromSlash(parent))
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, 0o644)
		}
		return nil // symlinks are not committed back
	})
	for _, r := range results {
		if err != nil || r.Err != nil {
			continue
		}
		rel := strings.TrimPrefix(r.Job.Output(), parent+"/")
		target := filepath.Join(dst, filepath.FromSlash(rel))
		if err = os.MkdirAll(filepath.Dir(target), 0o755); err == nil {
			err = os.WriteFile(target, r.Data, 0o644)
		}
	}
	if err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("staging the rendered catalogs: %w", err)
	}
	rd.Path, rd.Dir, rd.Cleanup = parent, dst, func() { os.RemoveAll(tmp) }
	return nil
}
