package template

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/filetree"
	"github.com/catalogbot/catalogbot/render"
)

// Check names the template render in diagnostics.
const Check = "render"

// Result is one job's render.
type Result struct {
	Job  Job
	Data []byte
	Err  error
	// ReproducedBy, for a render that differs from the committed file (check only), is another opm
	// release whose render is the committed file byte for byte ("" when none is).
	ReproducedBy OPMVersion
}

// RenderJobs renders jobs from root, concurrency at once (4 when 0), in job order. progress, when set,
// gets one line per catalog once all its jobs are done: how many failed to render and, with check, how
// many differ from the committed file (a catalog is "ok" only when none did).
func RenderJobs(ctx context.Context, root string, jobs []Job, src Source, concurrency int, check bool, progress io.Writer) []Result {
	if concurrency <= 0 {
		concurrency = 4
	}
	results := make([]Result, len(jobs))
	left := map[string]int{}
	var order []string
	for _, j := range jobs {
		if left[j.Catalog.Name] == 0 {
			order = append(order, j.Catalog.Name)
		}
		left[j.Catalog.Name]++
	}
	total := map[string]int{}
	for k, v := range left {
		total[k] = v
	}
	failed, drifted := map[string]int{}, map[string]int{}
	var mu sync.Mutex
	done := 0
	start := time.Now()
	var g errgroup.Group
	g.SetLimit(concurrency)
	for i := range jobs {
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error {
			data, err := jobs[i].Render(ctx, root, src)
			results[i] = Result{Job: jobs[i], Data: data, Err: err}
			drift := false
			if err == nil && check {
				committed, rerr := readCommitted(root, jobs[i].Output())
				drift = rerr != nil || string(committed) != string(data)
				if drift && rerr == nil {
					results[i].ReproducedBy = reproducedBy(ctx, root, src, jobs[i], committed)
				}
			}
			mu.Lock()
			c := jobs[i].Catalog.Name
			left[c]--
			if err != nil {
				failed[c]++
			}
			if drift {
				drifted[c]++
			}
			if left[c] == 0 {
				done++
				if progress != nil {
					var bad []string
					if failed[c] > 0 {
						bad = append(bad, fmt.Sprintf("%d FAILED", failed[c]))
					}
					if drifted[c] > 0 {
						bad = append(bad, fmt.Sprintf("%d DRIFTED", drifted[c]))
					}
					status := "ok"
					if len(bad) > 0 {
						status = strings.Join(bad, ", ")
					}
					fmt.Fprintf(progress, "render [%d/%d] %s: %s, %s (%s)\n", done, len(order), c, Plural(total[c], "package"), status, time.Since(start).Round(time.Millisecond))
				}
			}
			mu.Unlock()
			return nil
		})
	}
	g.Wait()
	for i := range results {
		if results[i].Err == nil && results[i].Data == nil {
			results[i] = Result{Job: jobs[i], Err: ctx.Err()}
		}
	}
	return results
}

// reproducedBy is the first other supported opm whose render of job is committed, or "".
func reproducedBy(ctx context.Context, root string, src Source, job Job, committed []byte) OPMVersion {
	for _, opm := range OPMVersions {
		if opm == job.OPMVersion || opm == DefaultOPMVersion && job.OPMVersion == "" {
			continue
		}
		if data, err := job.RenderWith(ctx, root, src, opm); err == nil && string(data) == string(committed) {
			return opm
		}
	}
	return ""
}

// Diagnostics turns failed renders into diagnostics on the template (or ci.yaml) line, and, when check
// is set, every render that differs from the committed file under root into a drift diagnostic with its
// diff (one per catalog file).
func Diagnostics(root string, results []Result, check bool) []diag.Diagnostic {
	var ds []diag.Diagnostic
	for _, r := range results {
		if r.Err != nil {
			d := diag.Diagnostic{Severity: diag.Error, Check: Check, Rule: "template-render", File: r.Job.CI, Line: r.Job.CILine,
				Package: r.Job.Package, Message: fmt.Sprintf("catalog %s: %v", r.Job.Catalog.Name, r.Err)}
			var te *Error
			if errors.As(r.Err, &te) {
				d.File, d.Line = te.File, te.Line
				d.Message = fmt.Sprintf("catalog %s: %s", r.Job.Catalog.Name, te.Msg)
				if errors.Is(r.Err, ErrNotCached) {
					d.Rule, d.Hint = "template-not-cached", "the bundle must be pulled: no committed catalog holds it"
					if errors.Is(r.Err, ErrOffline) {
						d.Hint = "render without --offline to pull it"
					}
				}
			}
			if diag.CategoryOf(r.Err) == diag.Infra {
				d.Rule, d.Hint = diag.RuleRegistryUnavailable, "the registry could not answer: not a problem of the change; retry later"
			}
			ds = append(ds, d)
			continue
		}
		if !check {
			continue
		}
		out := r.Job.Output()
		// Read through the root, and not through a link: a committed symlink is refused as every reader
		// of a catalog refuses it, never diffed (its target would land in a pull request's report).
		committed, err := readCommitted(root, out)
		var link *linkError
		if errors.As(err, &link) {
			ds = append(ds, diag.Diagnostic{Severity: diag.Error, Check: Check, Rule: catalog.RuleRefused, File: link.path, Package: r.Job.Package,
				Message: link.Error(), Hint: "a catalog holds regular files only (the image build refuses links); replace the link with the file it points to"})
			continue
		}
		if err != nil && !os.IsNotExist(err) {
			ds = append(ds, diag.Diagnostic{Severity: diag.Error, Check: Check, Rule: "render-drift", File: out, Package: r.Job.Package,
				Message: fmt.Sprintf("reading the committed %s: %v", out, err)})
			continue
		}
		if err == nil && string(committed) == string(r.Data) {
			continue
		}
		d := diag.Diagnostic{Severity: diag.Error, Check: Check, Rule: "render-drift", File: out, Package: r.Job.Package,
			Hint: "run catalogbot render and commit the result"}
		switch why := DescribeDrift(context.Background(), committed, r.Data); {
		case r.ReproducedBy != "":
			d.Hint = fmt.Sprintf("the committed file is what opm %s renders from %s (this package was rendered with it): pin it in %s "+
				"(catalogs.packages.%s.opmVersion: %s) rather than re-render released history with opm %s", r.ReproducedBy, r.Job.Template,
				config.ConfigFile, r.Job.Dir, r.ReproducedBy, cmp.Or(r.Job.OPMVersion, DefaultOPMVersion))
		case why != "" && err == nil:
			d.Hint = fmt.Sprintf("%s; if that is intended, run catalogbot render and commit the result", why)
		}
		diff, line := render.UnifiedDiff("committed/"+out, "rendered/"+out, committed, r.Data, 40)
		if os.IsNotExist(err) {
			d.Message = fmt.Sprintf("%s is missing: %s renders it for catalog %s:\n%s", out, r.Job.Template, r.Job.Catalog.Name, diff)
		} else {
			d.Line = max(line, 1)
			d.Message = fmt.Sprintf("%s differs from the render of %s for catalog %s:\n%s", out, r.Job.Template, r.Job.Catalog.Name, diff)
			if r.ReproducedBy != "" {
				d.Message = fmt.Sprintf("%s differs from opm %s's render of %s for catalog %s, and is opm %s's render byte for byte:\n%s",
					out, cmp.Or(r.Job.OPMVersion, DefaultOPMVersion), r.Job.Template, r.Job.Catalog.Name, r.ReproducedBy, diff)
			}
		}
		ds = append(ds, d)
	}
	return diag.Sort(ds)
}

// linkError is a committed catalog file reached through a symbolic link.
type linkError struct{ path string }

func (e *linkError) Error() string { return e.path + " is a symbolic link" }

// readCommitted reads the committed catalog file name under root as every reader of a catalog does: not
// through a symbolic link (a *linkError naming the link), a regular file of at most the loader's limit.
func readCommitted(root, name string) ([]byte, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if p, ok := filetree.LinkOn(r, name); ok {
		return nil, &linkError{path: p}
	}
	return readCapped(root, name, catalog.DefaultMaxFileSize)
}

// WriteResults writes every successful render to its catalog file under root (atomically, each file
// replaced by rename), leaving failed ones as committed.
func WriteResults(root string, results []Result) error {
	for _, r := range results {
		if r.Err != nil {
			continue
		}
		file := filepath.Join(root, filepath.FromSlash(r.Job.Output()))
		if old, err := os.ReadFile(file); err == nil && string(old) == string(r.Data) {
			continue
		}
		if err := filetree.WriteFileBytes(file, 0o644, r.Data); err != nil {
			return err
		}
	}
	return nil
}

// InfraErr is the infrastructure failure among results (a registry that could not answer), nil when no
// render failed that way: the stage is then an error (exit 3), not the change's failure.
func InfraErr(results []Result) error {
	var errs []error
	seen := map[string]bool{}
	for _, r := range results {
		if r.Err == nil || diag.CategoryOf(r.Err) != diag.Infra {
			continue
		}
		if msg := r.Err.Error(); !seen[msg] {
			seen[msg] = true
			errs = append(errs, r.Err)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return diag.InfraError(fmt.Errorf("%s could not reach a registry (not a problem of the change; retry later): %w",
		Plural(len(errs), "template render"), errors.Join(errs...)))
}

// Plural is "1 thing" or "n things".
func Plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
