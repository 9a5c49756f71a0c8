package template

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/config"
)

// Detection is how a template-driven checkout's committed catalogs were rendered, found by rendering
// every mapping with each supported opm and migration level and keeping what reproduces the committed
// files byte for byte.
type Detection struct {
	// Catalogs are the catalogs given, each with its detected migration level.
	Catalogs []Catalog
	// MigrateLevel is the migration the newer catalogs have ("" when none has), from catalog MigrateFrom
	// on ("" when every catalog has it).
	MigrateLevel, MigrateFrom string
	// OPMVersion is the opm most packages reproduce with; Packages pins the others and names the
	// packages whose directory is not their name (catalogs.packages).
	OPMVersion OPMVersion
	Packages   map[string]config.CatalogPackage
	// Outcomes are every mapping's render under the detected settings, in job order.
	Outcomes []Outcome
}

// Outcome is one mapping's render under the detected settings.
type Outcome struct {
	Job Job
	// Reproduced: the render is the committed file byte for byte.
	Reproduced bool
	// Err is why it did not render (a bundle no committed catalog holds, offline).
	Err error
	// Rendered and Committed are the two files when they differ.
	Rendered, Committed []byte
}

// migrateLevels are the levels Detect tries: upstream's catalogs are either as opm renders them or
// migrated to olm.csv.metadata.
var migrateLevels = []string{MigrateNone, MigrateCSVMetadata}

// Detect finds how the committed catalogs of the repository at root were rendered from its templates:
// the package each directory holds (from its committed olm.package blob), each catalog's migration level
// (one cut-over version, as upstream's render script has), and the opm release each package reproduces
// with. cats are the catalogs in version order, without migration levels. Nothing is pulled: bundles
// come from the committed catalogs under root, which must be a trusted tree (the maintainer's own
// checkout). Its steps: plan every mapping, render each with every opm and level, pick the cut-over,
// pick each package's opm, and say what the picks reproduce.
func Detect(ctx context.Context, root string, cats []Catalog) (*Detection, error) {
	names, err := committedPackageNames(ctx, root, cats)
	if err != nil {
		return nil, err
	}
	pkgs := map[string]config.CatalogPackage{}
	for dir, name := range names {
		if name != dir {
			pkgs[dir] = config.CatalogPackage{Package: name}
		}
	}
	cats = slices.Clone(cats)
	for i := range cats {
		cats[i].Packages = pkgs
	}
	jobs, _, err := Plan(root, cats, "")
	if err != nil {
		return nil, err
	}
	store := NewStore("")
	if err := SeedFromCommitted(ctx, store, root, cats, jobs); err != nil {
		return nil, err
	}
	tries, committed := renderEveryWay(ctx, root, &Images{Store: store, Offline: true}, jobs)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d := &Detection{Packages: pkgs}
	d.cutOver(cats, jobs, tries)
	levels := levelsOf(d.Catalogs)
	d.chooseOPMs(jobs, tries, levels)
	d.outcomes(jobs, tries, levels, committed)
	for i := range d.Catalogs {
		d.Catalogs[i].OPMVersion = d.OPMVersion
	}
	return d, nil
}

// renderTry is one render of a job with one opm at one migration level.
type renderTry struct {
	ok   bool // it reproduces the committed file
	err  error
	data []byte
}

// renderTries are, for job j, tries[j][level][opm].
type renderTries []map[string]map[OPMVersion]renderTry

// renderEveryWay renders every job with every opm at every migration level, two at a time, and reads
// each job's committed file.
func renderEveryWay(ctx context.Context, root string, src *Images, jobs []Job) (renderTries, [][]byte) {
	tries := make(renderTries, len(jobs))
	committed := make([][]byte, len(jobs))
	var mu sync.Mutex
	var g errgroup.Group
	g.SetLimit(2)
	for i, j := range jobs {
		committed[i], _ = readCapped(root, j.Output(), catalog.DefaultMaxFileSize)
		// Every map exists before any render of the job starts: the renders write into them under mu,
		// and a map written here while a render reads it is a data race.
		tries[i] = map[string]map[OPMVersion]renderTry{}
		for _, level := range migrateLevels {
			tries[i][level] = map[OPMVersion]renderTry{}
		}
		for _, level := range migrateLevels {
			for _, opm := range OPMVersions {
				g.Go(func() error {
					jl := j
					jl.Catalog.MigrateLevel = level
					data, err := jl.RenderWith(ctx, root, src, opm)
					mu.Lock()
					tries[i][level][opm] = renderTry{ok: err == nil && committed[i] != nil && bytes.Equal(data, committed[i]), err: err, data: data}
					mu.Unlock()
					return nil
				})
			}
		}
	}
	g.Wait()
	return tries, committed
}

// reproducedAt reports whether some opm reproduces job i's committed file at the level.
func (tries renderTries) reproducedAt(i int, level string) bool {
	for _, t := range tries[i][level] {
		if t.ok {
			return true
		}
	}
	return false
}

// cutOver decides each catalog's level by its jobs' votes, then the one cut-over that disagrees with the
// fewest: the catalogs from it on are migrated.
func (d *Detection) cutOver(cats []Catalog, jobs []Job, tries renderTries) {
	migrated := map[string]int{} // > 0: migrated, < 0: not, 0: undecided
	for i, j := range jobs {
		switch none, csv := tries.reproducedAt(i, MigrateNone), tries.reproducedAt(i, MigrateCSVMetadata); {
		case csv && !none:
			migrated[j.Catalog.Name]++
		case none && !csv:
			migrated[j.Catalog.Name]--
		}
	}
	cut, fewest := len(cats), -1
	for k := len(cats); k >= 0; k-- {
		conflicts := 0
		for ci, c := range cats {
			if ci >= k && migrated[c.Name] < 0 || ci < k && migrated[c.Name] > 0 {
				conflicts++
			}
		}
		if fewest < 0 || conflicts < fewest {
			cut, fewest = k, conflicts
		}
	}
	if cut < len(cats) {
		d.MigrateLevel = MigrateCSVMetadata
		if cut > 0 {
			d.MigrateFrom = cats[cut].Name
		}
	}
	for ci := range cats {
		if ci >= cut {
			cats[ci].MigrateLevel = MigrateCSVMetadata
		}
	}
	d.Catalogs = cats
}

// levelsOf is each catalog's migration level by name, MigrateNone spelled out.
func levelsOf(cats []Catalog) map[string]string {
	levelOf := map[string]string{}
	for _, c := range cats {
		levelOf[c.Name] = c.MigrateLevel
		if levelOf[c.Name] == "" {
			levelOf[c.Name] = MigrateNone
		}
	}
	return levelOf
}

// chooseOPMs gives each package the opm reproducing most of its mappings at its catalogs' levels (the
// default on a tie); the one most packages chose is the catalogs', the others are pinned per package.
func (d *Detection) chooseOPMs(jobs []Job, tries renderTries, levelOf map[string]string) {
	score := map[string]map[OPMVersion]int{}
	var dirs []string
	for i, j := range jobs {
		if score[j.Dir] == nil {
			score[j.Dir] = map[OPMVersion]int{}
			dirs = append(dirs, j.Dir)
		}
		for opm, t := range tries[i][levelOf[j.Catalog.Name]] {
			if t.ok {
				score[j.Dir][opm]++
			}
		}
	}
	chosen := map[string]OPMVersion{}
	votes := map[OPMVersion]int{}
	for _, dir := range dirs {
		best := DefaultOPMVersion
		for _, opm := range OPMVersions {
			if score[dir][opm] > score[dir][best] {
				best = opm
			}
		}
		if score[dir][best] > 0 {
			chosen[dir] = best
			votes[best]++
		}
	}
	d.OPMVersion = DefaultOPMVersion
	for _, opm := range OPMVersions {
		if votes[opm] > votes[d.OPMVersion] {
			d.OPMVersion = opm
		}
	}
	for _, dir := range dirs {
		if opm, ok := chosen[dir]; ok && opm != d.OPMVersion {
			p := d.Packages[dir]
			p.OPMVersion = string(opm)
			d.Packages[dir] = p
		}
	}
}

// outcomes are each job's render under the detected settings, with both files when they differ.
func (d *Detection) outcomes(jobs []Job, tries renderTries, levelOf map[string]string, committed [][]byte) {
	cats := d.Catalogs
	for i, j := range jobs {
		j.Catalog = cats[slices.IndexFunc(cats, func(c Catalog) bool { return c.Name == j.Catalog.Name })]
		j.Catalog.OPMVersion = d.OPMVersion
		j.OPMVersion = j.Catalog.OPMVersionOf(j.Dir)
		t := tries[i][levelOf[j.Catalog.Name]][j.OPMVersion]
		o := Outcome{Job: j, Reproduced: t.ok, Err: t.err}
		if !t.ok && t.err == nil {
			o.Rendered, o.Committed = t.data, committed[i]
		}
		d.Outcomes = append(d.Outcomes, o)
	}
}

// committedPackageNames is, for each package directory under root/operators, the name of the package
// its committed catalogs hold (the first catalog holding the directory decides; a directory no catalog
// holds keeps its own name).
func committedPackageNames(ctx context.Context, root string, cats []Catalog) (map[string]string, error) {
	entries, err := os.ReadDir(filepath.Join(root, OperatorsDir))
	if err != nil {
		return nil, fmt.Errorf("listing packages: %w", err)
	}
	out := map[string]string{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		out[e.Name()] = e.Name()
		for _, c := range cats {
			sub := os.DirFS(filepath.Join(root, filepath.FromSlash(c.Dir), e.Name()))
			if _, err := fs.Stat(sub, "."); err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				return nil, err
			}
			res, err := catalog.LoadFS(ctx, sub, catalog.LoadOptions{Lean: true})
			if err != nil {
				return nil, fmt.Errorf("reading %s/%s: %w", c.Dir, e.Name(), err)
			}
			if names := res.Catalog.PackageNames(); len(names) == 1 {
				out[e.Name()] = names[0]
				break
			}
		}
	}
	return out, nil
}
