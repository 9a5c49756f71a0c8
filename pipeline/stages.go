package pipeline

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/checks/owners"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/render"
	"github.com/catalogbot/catalogbot/render/template"
	"github.com/catalogbot/catalogbot/report"
)

// Membership answers whether a login is in an org's team (the bot asks GitHub; tests use a map).
type Membership = owners.Membership

// state is what the stages of one run share.
type state struct {
	in         Input
	change     *Change        // the prepared change (change.go)
	base, head *object.Commit // what the change lands on, and what lands (Change.Base, Change.Result)
	headDir    string

	rules    *Rules // where the configuration and owners files come from
	cfg      *config.Config
	noConfig bool
	changes  *changes

	layout     *Layout           // the repository's catalogs, resolved once from the base configuration
	attributed *Attribution      // the change's files by package (catalogs.go)
	affected   *affected         // the touched packages and the catalogs holding them (catalogs.go)
	pairs      *[]catalogPair    // their base and head catalogs (percatalog.go)
	rendered   []template.Result // the render stage's renders of the touched packages' templates (catalogs.go)
	// validated are the whole head catalogs (lean) the validate stage loaded, by directory, kept for the
	// policy stage's dependency lookups when a policy is enabled (policy.go).
	validated map[string]*catalog.Catalog

	openLines []*stageLines // the stage writers handed out to the running stage (observer.go)
}

func (s *state) loadConfig(ctx context.Context) report.Stage {
	ch := s.in.Change
	if ch == nil {
		rules := s.in.Rules
		if rules == nil {
			var st report.Stage
			if rules, st = LoadRules(s.in.Repo, s.in.Base); st.Status != report.Pass {
				return st
			}
		}
		var err error
		if ch, err = PrepareRange(ctx, s.in.Repo, rules, s.in.Base, s.in.Head); err != nil {
			return ConfigStage(err)
		}
	}
	s.change, s.base, s.head = ch, ch.Base, ch.Result
	s.rules, s.cfg, s.noConfig = ch.Rules, ch.Rules.Config, ch.Rules.NoConfig
	s.layout, s.changes, s.attributed = ch.Layout, ch.changes, ch.Attribution
	return report.Stage{Name: "config", Status: report.Pass}
}

// ConfigStage is the config stage of a change that could not be prepared (a layout the configuration
// cannot resolve, an unreadable revision): by the error's category, as every stage's error.
func ConfigStage(err error) report.Stage {
	st := stageFromErr(err)
	st.Name = "config"
	return st
}

func (s *state) catalogDir() string { return path.Clean(s.cfg.Catalog.Dir) }

func (s *state) refsFile() string { return s.cfg.References.File }

// loadSubset loads a partial catalog in full (not lean) mode, from dir in the repository (the checks on
// it name their files under dir; "" for none); load problems are the validate stage's.
func loadSubset(ctx context.Context, fsys fs.FS, dir string) (*catalog.Catalog, error) {
	res, err := catalog.LoadFS(ctx, fsys, catalog.LoadOptions{Dir: diag.DirOf(dir)})
	if err != nil {
		return nil, err
	}
	return res.Catalog, nil
}

func (s *state) owners(ctx context.Context) report.Stage {
	if s.noConfig {
		return report.Stage{Status: report.Skipped, Summary: "no " + config.ConfigFile + " on the base branch: ownership is not enforced"}
	}
	cfg, ch, err := s.ownersChange(ctx)
	if err != nil {
		return stageFromErr(err)
	}
	if pkg := s.in.Release; pkg != "" && cfg.Release.AutoMerge && s.in.Change.ReleaseOnly(pkg) && !slices.Contains(ch.NewPackages, pkg) {
		return report.Stage{Status: report.Pass, Summary: fmt.Sprintf("the App's release of %s changes only its templates and catalogs (release.autoMerge of the base branch's %s)",
			pkg, config.ConfigFile)}
	}
	if g := s.in.Promotion; g.Package != "" && cfg.Promotion.AutoMerge && s.in.Change.PromotionOnly(g.Package, g.Catalog) && !slices.Contains(ch.NewPackages, g.Package) {
		return report.Stage{Status: report.Pass, Summary: fmt.Sprintf("the App's promotion of %s into %s changes only its ci.yaml and its directory there (promotion.autoMerge of the base branch's %s)",
			g.Package, g.Catalog, config.ConfigFile)}
	}
	ownersFiles := map[string][]string{}
	var ds []diag.Diagnostic
	if cfg.OwnersFrom != "" {
		// read at the rules' commit (the base branch's tip), never from the change itself
		pkgs := append(slices.Sorted(maps.Keys(ch.Packages)), ch.ReferenceEntries...)
		for _, pkg := range pkgs {
			file := cfg.OwnersFilePath(pkg)
			data, ok, err := s.in.Repo.ReadFile(s.rules.Commit, file)
			if err != nil {
				return stageFromErr(err)
			}
			if ok {
				logins, fds := config.ParseOwnersFile(file, data)
				ownersFiles[pkg] = logins
				ds = append(ds, fds...)
			}
		}
	}
	if ch.ConfigChanged {
		// The base configuration decides this change; the head configuration must still be valid, or every
		// later pull request would be stuck.
		data, ok, err := s.in.Repo.ReadFile(s.head, config.ConfigFile)
		if err != nil {
			return stageFromErr(err)
		}
		if ok {
			_, cds, _ := config.ParseConfig(config.ConfigFile, data)
			ds = append(ds, cds...)
		}
	}
	dec, err := owners.Decide(ctx, cfg, ownersFiles, ch, s.in.Author, s.in.Approvers, s.in.Membership)
	if err != nil {
		return stageFromErr(err)
	}
	for _, d := range dec.Diagnostics {
		// place package-level findings (a new package, say) on the package's first changed file
		if files := ch.Packages[d.Package].Files; d.File == "" && len(files) > 0 {
			d.File = files[0]
		}
		if d.Rule == "owners-not-owner" {
			d.File = templateFirst(ch.Packages[d.Package].Files, d.File, cfg.OwnersFilePath(d.Package))
		}
		ds = append(ds, d)
	}
	touched := len(ch.Packages) + len(ch.Paths) + len(ch.ReferenceEntries)
	for _, pc := range ch.Packages {
		for _, f := range pc.Files {
			if _, ok := cfg.OwnersFilePackage(f); (ok || config.IsOwnersFileName(f)) && !ch.OwnersKept[f] {
				touched++ // an owners file is a subject of its own
			}
		}
	}
	if dec.Allowed || diag.HasErrors(ds) && len(dec.Denied) == 0 {
		sum := fmt.Sprintf("%s may change everything touched (%s)", s.in.Author, touchedCount(touched))
		if diag.HasErrors(ds) {
			sum += ", but the changed " + config.ConfigFile + " is invalid"
		}
		return stageFromDiags(sum, ds)
	}
	st := stageFromDiags(fmt.Sprintf("%s may not change %d of the %s touched", s.in.Author, len(dec.Denied), touchedCount(touched)), ds)
	st.Status = report.Fail
	return st
}

// render is the drift gate of what the layout renders its catalogs from: the template mappings of the
// touched packages, and the references config (references.file) of a layout of one catalog; the layout
// says why when there is neither.
func (s *state) render(ctx context.Context) report.Stage {
	a, err := s.affectedCatalogs(ctx)
	if err != nil {
		return stageFromErr(err)
	}
	if len(a.jobs) > 0 || len(a.planDs) > 0 {
		return s.renderTemplates(ctx, a)
	}
	if s.layout.References == "" {
		return report.Stage{Status: report.Skipped, Summary: s.layout.NothingToRender}
	}
	data, ok, err := s.in.Repo.ReadFile(s.head, s.refsFile())
	if err != nil {
		return stageFromErr(err)
	}
	if !ok {
		return report.Stage{Status: report.Skipped, Summary: s.refsFile() + " does not exist"}
	}
	st, _ := renderStage(ctx, s.headDir, s.refsFile(), s.catalogDir(), data,
		render.Options{RemoteOptions: s.in.RemoteOptions, Format: s.cfg.Catalog.Format, Progress: s.stageWriter("render"),
			AllowedRegistries: s.cfg.Images.AllowedRegistries}, "")
	return st
}

// renderStage renders the references config refsFile (data) of the checkout at tree and compares the
// result with the committed catalog catalogDir, both slash paths relative to tree: the render stage of
// pull requests and of publishes. Local references must resolve inside tree, and image references reach
// only opts.AllowedRegistries when set (images.allowedRegistries of the base configuration). The rendered catalog is left in out/<name> (a temporary directory,
// removed, when out is empty); rendered tells whether rendering itself succeeded.
func renderStage(ctx context.Context, tree, refsFile, catalogDir string, data []byte, opts render.Options, out string) (st report.Stage, rendered bool) {
	cfg, ds := render.ParseConfig(data, refsFile)
	if diag.HasErrors(ds) {
		return stageFromDiags("references config "+refsFile+" is invalid", ds), false
	}
	// The rendered catalog is <parent of catalog.dir>/<name>: name must be the catalog directory's name.
	if want := path.Base(catalogDir); cfg.Name != want {
		return stageFromErr(diag.UsageError(fmt.Errorf("%s: name %q must be %q, the name of the catalog directory (catalog.dir in %s), so the rendered catalog is the validated one",
			refsFile, cfg.Name, want, config.ConfigFile))), false
	}
	opts.BaseDir = path.Join(tree, path.Dir(refsFile))
	opts.Root = tree // local references never leave the checkout
	opts.CatalogsDir = diag.DirOf(path.Dir(catalogDir))
	committed := path.Join(tree, path.Dir(catalogDir))
	var err error
	if out == "" {
		ds, err = render.Drift(ctx, cfg, committed, opts)
	} else {
		ds, err = render.DriftInto(ctx, cfg, committed, out, opts)
	}
	st = stageFromDiags(fmt.Sprintf("%s rendered from %s and compared with %s", plural(len(cfg.References), "reference"), refsFile, catalogDir), ds)
	if err != nil {
		e := stageFromErr(err)
		st.Status, st.Summary = e.Status, "rendering "+refsFile+" failed"
		if len(ds) == 0 {
			st.Err = e.Err // otherwise the diagnostics say it, each on its reference's line
		}
	}
	return st, err == nil
}

func touchedCount(n int) string {
	if n == 1 {
		return "1 package or path"
	}
	return fmt.Sprintf("%d packages or paths", n)
}
