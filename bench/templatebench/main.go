// Command templatebench compares, in one run, catalogbot with upstream's recipe on the shared data's
// community-operators packages (22 packages, 11 catalogs): re-rendering every template mapping with a
// warm cache against `opm alpha render-template` per mapping, and validating every catalog against
// `opm validate` per catalog. The bundle images are rebuilt from the committed catalogs (their
// olm.bundle.object manifests, or a ClusterServiceVersion made from olm.csv.metadata where only that is
// committed) and served by a local registry; the templates are rewritten to name them. Run it through
// bench/templates.sh.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing/fstest"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"sigs.k8s.io/yaml"

	"github.com/catalogbot/catalogbot/build/bundleimage"
	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/internal/registrytest"
	"github.com/catalogbot/catalogbot/render/template"
)

const repoConfig = `apiVersion: catalogbot.dev/v1alpha1
kind: Config
catalogs:
  pattern: catalogs/{version}
  image: quay.io/example/index:{version}
  migrateLevel: bundle-object-to-csv-metadata
  migrateFrom: v4.17
`

func main() {
	src := flag.String("repo", "", "the community-operators-shaped repository (shared data fbc-templates)")
	catalogbot := flag.String("catalogbot", "", "catalogbot binary")
	opm := flag.String("opm", "", "opm binary")
	flag.Parse()
	ctx := context.Background()
	reg, stop, err := registrytest.Serve(ctx)
	must(err)
	defer stop()
	work, err := os.MkdirTemp("", "templatebench-")
	must(err)
	defer os.RemoveAll(work)
	repo := filepath.Join(work, "repo")
	must(exec.Command("cp", "-r", *src, repo).Run())
	must(os.WriteFile(filepath.Join(repo, ".catalogbot.yaml"), []byte(repoConfig), 0o644))

	// Every committed bundle, by image reference, in the fullest form committed.
	bundles := map[string]*catalog.Bundle{}
	cfg, _, err := config.ParseConfig(".catalogbot.yaml", []byte(repoConfig))
	must(err)
	cats, err := cfg.ResolveCatalogs(repo)
	must(err)
	for _, c := range cats {
		res, err := catalog.LoadDir(ctx, filepath.Join(repo, c.Dir), catalog.LoadOptions{})
		must(err)
		for _, b := range res.Catalog.Bundles {
			if old, ok := bundles[b.Image]; !ok || (!hasObjects(old) && hasObjects(b)) {
				bundles[b.Image] = b
			}
		}
	}
	newRef := map[string]string{}
	for _, ref := range sortedKeys(bundles) {
		newRef[ref] = push(ctx, reg.Host, ref, bundles[ref])
	}
	removed := rewriteTemplates(repo, newRef)

	var tcats []template.Catalog
	for _, c := range cats {
		tcats = append(tcats, template.Catalog{Name: c.Name, Dir: c.Dir, MigrateLevel: c.MigrateLevel})
	}
	jobs, _, err := template.Plan(repo, tcats, "")
	must(err)

	cache := filepath.Join(work, "cache")
	// render exits 1 when a render is invalid or fails; the timing is what matters here, the renders are
	// compared with opm's below
	run := func(args ...string) time.Duration {
		start := time.Now()
		cmd := exec.Command(*catalogbot, args...)
		cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 1) {
			log.Fatalf("catalogbot %v: %v\n%s", args, err, out)
		}
		return time.Since(start)
	}
	cold := run("render", "--repo", repo)
	warm := run("render", "--repo", repo)

	// upstream's loop: one opm alpha render-template per mapping and catalog
	home := filepath.Join(work, "home")
	must(os.MkdirAll(filepath.Join(home, ".config", "containers"), 0o755))
	must(os.WriteFile(filepath.Join(home, ".config", "containers", "policy.json"), []byte(`{"default":[{"type":"insecureAcceptAnything"}]}`), 0o644))
	opmOut := filepath.Join(work, "opm")
	start := time.Now()
	for _, j := range jobs {
		args := []string{"alpha", "render-template", "--use-http", j.Type, filepath.Join(repo, j.Template), "-o", "yaml"}
		if j.Catalog.MigrateLevel != "" {
			args = append(args, "--migrate-level", j.Catalog.MigrateLevel)
		}
		cmd := exec.Command(*opm, args...)
		cmd.Env = append(os.Environ(), "HOME="+home, "XDG_RUNTIME_DIR="+home, "TMPDIR="+home)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		data, err := cmd.Output()
		if err != nil {
			log.Fatalf("opm %v: %v\n%s", args, err, stderr.Bytes())
		}
		file := filepath.Join(opmOut, filepath.FromSlash(j.Output()))
		must(os.MkdirAll(filepath.Dir(file), 0o755))
		must(os.WriteFile(file, data, 0o644))
	}
	loop := time.Since(start)
	same := 0
	for _, j := range jobs {
		a, _ := os.ReadFile(filepath.Join(opmOut, filepath.FromSlash(j.Output())))
		b, _ := os.ReadFile(filepath.Join(repo, filepath.FromSlash(j.Output())))
		if bytes.Equal(a, b) {
			same++
		} else {
			fmt.Printf("differs from opm: %s\n", j.Output())
			if os.Getenv("TEMPLATEBENCH_KEEP") != "" {
				_ = os.WriteFile("/tmp/templatebench-opm.yaml", a, 0o644)
				_ = os.WriteFile("/tmp/templatebench-cb.yaml", b, 0o644)
			}
		}
	}

	// validation of the committed catalogs (the renders above include ecr-secret-operator's, whose
	// template names bundles it does not list: that render is rightly invalid)
	committed := filepath.Join(work, "committed")
	must(exec.Command("cp", "-r", *src, committed).Run())
	must(os.WriteFile(filepath.Join(committed, ".catalogbot.yaml"), []byte(repoConfig), 0o644))
	validate := run("validate", committed)
	start = time.Now()
	for _, c := range cats {
		if out, err := exec.Command(*opm, "validate", filepath.Join(committed, c.Dir)).CombinedOutput(); err != nil {
			log.Fatalf("opm validate %s: %v\n%s", c.Dir, err, out)
		}
	}
	opmValidate := time.Since(start)

	fmt.Printf("%d packages, %d template mappings into %d catalogs; %d bundle images in a local registry (%d template entries naming uncommitted bundles dropped)\n",
		countPackages(jobs), len(jobs), len(cats), len(newRef), removed)
	fmt.Printf("render: opm alpha render-template loop:   %8.2f s\n", loop.Seconds())
	fmt.Printf("render: catalogbot render (cold cache):   %8.2f s   speed-up %.1fx\n", cold.Seconds(), loop.Seconds()/cold.Seconds())
	fmt.Printf("render: catalogbot render (warm cache):   %8.2f s   speed-up %.1fx\n", warm.Seconds(), loop.Seconds()/warm.Seconds())
	fmt.Printf("render: outputs byte-identical to opm's:  %d of %d\n", same, len(jobs))
	fmt.Printf("validate: opm validate per catalog:       %8.2f s\n", opmValidate.Seconds())
	fmt.Printf("validate: catalogbot validate (all %d):   %8.2f s   speed-up %.1fx\n", len(cats), validate.Seconds(), opmValidate.Seconds()/validate.Seconds())
}

func hasObjects(b *catalog.Bundle) bool {
	for _, p := range b.Properties {
		if p.Type == catalog.PropertyBundleObject {
			return true
		}
	}
	return false
}

// push builds b's bundle image, pushes it under the original repository path on host, and returns the
// reference the template should name: by digest when the original was, else by the original tag.
func push(ctx context.Context, host, orig string, b *catalog.Bundle) string {
	ref, err := name.ParseReference(orig)
	must(err)
	repo := host + "/" + ref.Context().RepositoryStr()
	img := bundleImage(b)
	tag := "v-" + regexp.MustCompile(`[^A-Za-z0-9_.-]`).ReplaceAllString(b.Name, "-")
	if t, ok := ref.(name.Tag); ok {
		tag = t.TagStr()
	}
	dst, err := name.NewTag(repo+":"+tag, name.Insecure)
	must(err)
	must(remote.Write(dst, img, remote.WithContext(ctx)))
	if _, ok := ref.(name.Digest); ok {
		d, err := img.Digest()
		must(err)
		return repo + "@" + d.String()
	}
	return repo + ":" + tag
}

// bundleImage rebuilds a registry+v1 bundle image from a committed bundle, as release --push builds one.
func bundleImage(b *catalog.Bundle) v1.Image {
	pkg, version := packageOf(b)
	files := map[string][]byte{}
	for i, p := range b.Properties {
		if p.Type != catalog.PropertyBundleObject {
			continue
		}
		var obj catalog.BundleObject
		must(json.Unmarshal(p.Value, &obj))
		files[fmt.Sprintf("manifests/object-%02d.json", i)] = obj.Data
	}
	if len(files) == 0 {
		files["manifests/csv.json"] = csvFromMetadata(b, version)
	}
	ann := map[string]string{
		"operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
		"operators.operatorframework.io.bundle.manifests.v1": "manifests/",
		"operators.operatorframework.io.bundle.metadata.v1":  "metadata/",
		"operators.operatorframework.io.bundle.package.v1":   pkg,
		"operators.operatorframework.io.bundle.channels.v1":  "alpha",
	}
	data, err := yaml.Marshal(map[string]any{"annotations": ann})
	must(err)
	files["metadata/annotations.yaml"] = data
	fsys := fstest.MapFS{}
	for f, data := range files {
		fsys[f] = &fstest.MapFile{Data: data, Mode: 0o644}
	}
	img, err := bundleimage.BuildFS(context.Background(), fsys)
	must(err)
	return img
}

func packageOf(b *catalog.Bundle) (pkg, version string) {
	for _, p := range b.Properties {
		if p.Type == catalog.PropertyPackage {
			var v struct {
				PackageName string `json:"packageName"`
				Version     string `json:"version"`
			}
			must(json.Unmarshal(p.Value, &v))
			return v.PackageName, v.Version
		}
	}
	log.Fatalf("bundle %s has no olm.package", b.Name)
	return "", ""
}

// csvFromMetadata makes a ClusterServiceVersion from a bundle committed only in the olm.csv.metadata form.
func csvFromMetadata(b *catalog.Bundle, version string) []byte {
	var md map[string]any
	for _, p := range b.Properties {
		if p.Type == catalog.PropertyCSVMetadata {
			must(json.Unmarshal(p.Value, &md))
		}
	}
	spec := map[string]any{"version": version, "install": map[string]any{"strategy": "deployment", "spec": map[string]any{"deployments": []any{}}}}
	for k, v := range md {
		switch k {
		case "annotations", "labels", "crdDescriptions", "apiServiceDefinitions":
		default:
			spec[k] = v
		}
	}
	var related []map[string]string
	for _, r := range b.RelatedImages {
		if r.Image != b.Image {
			related = append(related, map[string]string{"name": r.Name, "image": r.Image})
		}
	}
	if related != nil {
		spec["relatedImages"] = related
	}
	meta := map[string]any{"name": b.Name}
	if a, ok := md["annotations"]; ok {
		meta["annotations"] = a
	}
	data, err := json.Marshal(map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion", "metadata": meta, "spec": spec})
	must(err)
	return data
}

// rewriteTemplates points every template at the local registry, dropping list items that name bundles no
// committed catalog holds; it returns how many it dropped.
func rewriteTemplates(repo string, newRef map[string]string) int {
	files, err := filepath.Glob(filepath.Join(repo, "operators", "*", "catalog-templates", "*.yaml"))
	must(err)
	removed := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		must(err)
		var out []string
		lines := strings.Split(string(data), "\n")
		for i := 0; i < len(lines); i++ {
			l := lines[i]
			ref := refIn(l)
			if ref == "" && strings.HasSuffix(strings.ToLower(strings.TrimSpace(l)), "image:") && i+1 < len(lines) {
				ref = strings.TrimSpace(lines[i+1])
				if n, ok := newRef[ref]; ok {
					out = append(out, l, strings.Replace(lines[i+1], ref, n, 1))
				} else {
					removed++
				}
				i++
				continue
			}
			if ref != "" {
				n, ok := newRef[ref]
				if !ok && strings.HasPrefix(strings.TrimSpace(l), "- ") {
					removed++
					continue
				}
				if ok {
					l = strings.Replace(l, ref, n, 1)
				}
			}
			out = append(out, l)
		}
		must(os.WriteFile(f, []byte(strings.Join(out, "\n")), 0o644))
	}
	return removed
}

var refRE = regexp.MustCompile(`\b(quay\.io/[^\s"']+)`)

func refIn(line string) string {
	if !strings.Contains(strings.ToLower(line), "image:") {
		return ""
	}
	m := refRE.FindStringSubmatch(line)
	if m == nil {
		return ""
	}
	return m[1]
}

func countPackages(jobs []template.Job) int {
	seen := map[string]bool{}
	for _, j := range jobs {
		seen[j.Package] = true
	}
	return len(seen)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
