package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/catalogbot/catalogbot/checks/smoke"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
)

// The smoke stage of a template-driven repository (catalogs: in the base configuration): every catalog
// whose committed content of a package changed is smoke-installed on a kind cluster of its own cluster
// version's Kubernetes (node image by version, smokeNodeImage), its changed packages from the base's
// catalog image then the head's, exactly as a single catalog's are. Only one kind cluster exists at a
// time: the catalogs run one after the other in version order, each cluster deleted before the next is
// created, each run bounded by an equal share of what is left of the stage's deadline (a run that
// finishes early leaves its time to the next ones; one that hangs cannot starve them).
//
// Sharing: two catalogs are installed in one run only when that run is provably the same install for
// both: the same node image, the same base and head catalog images by digest (the catalog image build is
// reproducible, so equal digests mean equal catalog content, and different content never shares), and
// the same packages, installed from the base or fresh, expected at the same CSVs. Anything else runs
// separately. In community-operators' layout catalogs hold different package sets, so sharing is rare;
// it is there so that a repository mapping several cluster versions to one node image does not pay the
// same cluster twice.
//
// A cluster is never reused for another install, even of the same node image: what one catalog's
// install leaves behind (cluster-scoped CRDs, namespaces still terminating) could make the next one pass
// (a package needing a CRD nobody provides) or fail, so each install gets the fresh cluster a subscribed
// cluster of that version would be.
//
// Which catalogs: smoke.clusterVersions of the base branch's configuration (never the pull request's:
// a change cannot narrow its own smoke install) limits them; an affected catalog outside the limit is
// named in the summary and in one warning, and when the limit leaves no affected catalog the stage is
// skipped with that warning: the maintainers chose on the base branch not to pay for those clusters.
// The limit narrows only catalogs the base has: a catalog directory the pull request adds (a pattern's
// new version) is installed whatever the limit says, as the base's maintainers cannot have chosen to
// leave out what did not exist, and a contributor must not dodge the install by putting a package in a
// catalog of a new name.
// A catalog that needs a cluster and has no node image for its Kubernetes version is a usage error
// naming the catalog and the version, before any cluster is created; never a skip.

// catalogRun is one smoke install: one catalog, or several that provably share it.
type catalogRun struct {
	cats      []config.Catalog
	plan      smoke.Plan
	nodeImage string
	// olms are the OLMs the catalogs are installed with, one install (and cluster) each, in order:
	// ["v0"], ["v1"] or ["v0", "v1"] (config.SmokeConfig.OLMsFor, or the front-end's choice).
	olms []string
	// base and head catalog images by digest, and their archives for the kind nodes
	baseRef, baseArchive, headRef, headArchive string
	// basePushed and headPushed are the same images by digest in the push target (SmokeInput.Registry),
	// for OLM v1, whose catalogd pulls them itself; empty when the run has no OLM v1 install.
	basePushed, headPushed string
}

func (r *catalogRun) names() []string {
	out := make([]string, len(r.cats))
	for i, c := range r.cats {
		out[i] = c.Name
	}
	return out
}

// kubernetes names the Kubernetes versions of the run's catalogs ("unknown" for a catalog without a
// cluster version).
func (r *catalogRun) kubernetes() string {
	var vs []string
	for _, c := range r.cats {
		v := c.Kubernetes
		if v == "" {
			v = "unknown"
		}
		if !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	return strings.Join(vs, ", ")
}

// key is equal for runs that are the same install.
func (r *catalogRun) key() string {
	return strings.Join([]string{r.nodeImage, r.baseRef, r.headRef, strings.Join(r.plan.Packages, ","),
		strings.Join(r.plan.FromBase, ","), fmt.Sprint(r.plan.Expect), strings.Join(r.olms, ",")}, "\x00")
}

// buildRunImages builds each run's head (and, when it installs from the base, base) catalog image, then
// merges runs that are the same install (catalogRun.key).
func (s *state) buildRunImages(ctx context.Context, runs []*catalogRun, tmp string) ([]*catalogRun, error) {
	var baseDir string
	for i, r := range runs {
		cat := r.cats[0]
		// one directory per run for the archives; the image names are the same for every run, so that
		// equal content has equal references (catalogRun.key)
		dir := filepath.Join(tmp, fmt.Sprint(i+1))
		if err := os.Mkdir(dir, 0o700); err != nil {
			return nil, err
		}
		push := slices.Contains(r.olms, config.SmokeOLMv1) // checkPushTarget made sure there is a target
		var err error
		if r.headRef, r.headArchive, r.headPushed, err = s.smokeCatalog(ctx, filepath.Join(s.headDir, filepath.FromSlash(cat.Dir)), "head", dir, push); err != nil {
			return nil, fmt.Errorf("catalog %s: %w", cat.Name, err)
		}
		if len(r.plan.FromBase) == 0 {
			continue
		}
		if baseDir == "" {
			dir, cleanup, err := s.in.Repo.Checkout(ctx, s.base)
			if err != nil {
				return nil, err
			}
			defer cleanup()
			baseDir = dir
		}
		if r.baseRef, r.baseArchive, r.basePushed, err = s.smokeCatalog(ctx, filepath.Join(baseDir, filepath.FromSlash(cat.Dir)), "base", dir, push); err != nil {
			return nil, fmt.Errorf("catalog %s: %w", cat.Name, err)
		}
	}
	var out []*catalogRun
	byKey := map[string]*catalogRun{}
	for _, r := range runs {
		if same, ok := byKey[r.key()]; ok {
			same.cats = append(same.cats, r.cats...)
			continue
		}
		byKey[r.key()] = r
		out = append(out, r)
	}
	return out, nil
}

// changedPackagesByCatalog lists, per catalog, the packages whose committed files under the catalog's
// directory the change touched, by blob identity (Attribute; the drift gate holds a template-driven
// catalog equal to its templates' render), sorted.
func (s *state) changedPackagesByCatalog(ctx context.Context) (map[string][]string, error) {
	at, err := s.attribution(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for pkg, files := range at.Packages {
		for _, f := range files {
			if c, _, ok := s.layout.CatalogOf(f); ok && !slices.Contains(out[c.Name], pkg) {
				out[c.Name] = append(out[c.Name], pkg)
			}
		}
	}
	for _, pkgs := range out {
		slices.Sort(pkgs)
	}
	return out, nil
}

// unknownClusterVersions warns about smoke.clusterVersions entries that name no configured catalog (a
// typo smokes nothing for that version).
func (s *state) unknownClusterVersions(cats []config.Catalog) []diag.Diagnostic {
	var ds []diag.Diagnostic
	for _, v := range s.cfg.Smoke.ClusterVersions {
		known := false
		for _, c := range cats {
			if (config.SmokeConfig{ClusterVersions: []string{v}}).SmokesCatalog(c) {
				known = true
				break
			}
		}
		if !known {
			ds = append(ds, diag.Diagnostic{Severity: diag.Warning, Check: "smoke", Rule: "smoke-unknown-cluster-version", File: config.ConfigFile,
				Message: fmt.Sprintf("smoke.clusterVersions names %q, which is no configured catalog", v)})
		}
	}
	return ds
}

// smokeClusterName names run i's kind cluster after the head commit and its (first) catalog, in kind's
// alphabet; the index keeps names distinct whatever the catalogs are called.
func smokeClusterName(head string, i int, catalog string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(catalog) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
		if b.Len() == 16 {
			break
		}
	}
	return fmt.Sprintf("catalogbot-%s-%d-%s", short(head), i+1, strings.Trim(b.String(), "-"))
}

func runNames(runs []*catalogRun) []string {
	var out []string
	for _, r := range runs {
		out = append(out, r.names()...)
	}
	return out
}

func nodeImageLabel(img string) string {
	if img == "" {
		return "(kind's default)"
	}
	return img
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

func itThem(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}
