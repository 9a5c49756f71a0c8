package policy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/internal/shareddata"
)

func allOF() Severities {
	sev := Severities{}
	for _, r := range ofRules {
		sev[r] = diag.Error
	}
	return sev
}

func runOFCache(t *testing.T, c *catalog.Catalog, kube string, sev Severities, cache *OFCache) []diag.Diagnostic {
	t.Helper()
	res, err := Run(context.Background(), Input{Catalog: reload(c), Kubernetes: kube, MaxPerRule: -1, OFCache: cache}, sev)
	if err != nil {
		t.Fatal(err)
	}
	return res.Diagnostics
}

// The findings read back from the cache are the validators' own, on every bundle of the v4.16 catalog:
// the same diagnostics (rule, severity, message, file:line, bundle) as a run without a disk cache, and
// the second run validates nothing.
func TestOFCacheGivesWhatTheValidatorsGive(t *testing.T) {
	res, err := catalog.LoadDir(t.Context(), shareddata.Dir(t, "catalogs", "community-operators-prod-v4.16"), catalog.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Catalog
	uncached := runOFCache(t, c, "1.29", allOF(), nil)
	if len(uncached) == 0 {
		t.Fatal("no findings on v4.16: nothing to compare")
	}
	dir := t.TempDir()
	first := NewOFCache(dir)
	if got := runOFCache(t, c, "1.29", allOF(), first); !reflect.DeepEqual(got, uncached) {
		t.Fatalf("with an empty disk cache:\n%v\nwant\n%v", got, uncached)
	}
	fromDisk, validated := first.counts()
	if fromDisk != 0 || validated < 200 {
		t.Fatalf("empty cache: %d from disk, %d validated", fromDisk, validated)
	}
	second := NewOFCache(dir)
	if got := runOFCache(t, c, "1.29", allOF(), second); !reflect.DeepEqual(got, uncached) {
		t.Fatalf("from the disk cache:\n%v\nwant\n%v", got, uncached)
	}
	if d, v := second.counts(); d != validated || v != 0 {
		t.Fatalf("warm cache: %d from disk, %d validated; want %d and 0", d, v, validated)
	}
}

// What a contributor changes is validated again: a bundle that passed, edited so that a validator refuses
// it, is refused with a warm cache; so is the same content for another Kubernetes version or rule set.
// Identical bundles are validated once.
func TestOFCacheMissesChangedContent(t *testing.T) {
	c := load(t, "community-operators-prod-v4.16", "coherence-operator")
	dir := t.TempDir()
	sev := Severities{ruleOFCRD: diag.Error, ruleOFDeprecatedAPIs: diag.Error}
	warm := NewOFCache(dir)
	if ds := runOFCache(t, c, "", sev, warm); len(ds) != 0 {
		t.Fatalf("coherence-operator passes: %v", ds)
	}
	_, n := warm.counts()
	if n != len(c.Bundles) {
		t.Fatalf("validated %d of %d distinct bundles", n, len(c.Bundles))
	}
	// the same bundle under another name: the same content, validated once
	dup := *lastBundle(c)
	dup.Name += "-copy"
	c.Bundles = append(c.Bundles, &dup)
	again := NewOFCache(dir)
	runOFCache(t, c, "", sev, again)
	if d, v := again.counts(); d != n || v != 0 {
		t.Fatalf("an identical bundle: %d from disk, %d validated", d, v)
	}

	edited := load(t, "community-operators-prod-v4.16", "coherence-operator")
	b := lastBundle(edited)
	editObject(t, b, "CustomResourceDefinition", func(crd map[string]any) { crd["spec"].(map[string]any)["scope"] = "Everywhere" })
	cache := NewOFCache(dir)
	ds := runOFCache(t, edited, "", sev, cache)
	if !slices.ContainsFunc(ds, func(d diag.Diagnostic) bool {
		return d.Bundle == b.Name && d.Rule == ruleOFCRD && strings.Contains(d.Message, "spec.scope")
	}) {
		t.Fatalf("an edited CRD passed with a warm cache: %v", ds)
	}
	if d, v := cache.counts(); d != n-1 || v != 1 {
		t.Fatalf("one bundle edited: %d from disk, %d validated; want %d and 1", d, v, n-1)
	}
	for name, run := range map[string]func(*OFCache){
		"another Kubernetes version": func(oc *OFCache) { runOFCache(t, c, "1.25", sev, oc) },
		"another rule set":           func(oc *OFCache) { runOFCache(t, c, "", Severities{ruleOFCRD: diag.Error}, oc) },
		"the same rules at warning": func(oc *OFCache) {
			runOFCache(t, c, "", Severities{ruleOFCRD: diag.Warning, ruleOFDeprecatedAPIs: diag.Warning}, oc)
		},
	} {
		oc := NewOFCache(dir)
		run(oc)
		d, v := oc.counts()
		if name == "the same rules at warning" { // severity is applied after the validators: one entry serves both
			if v != 0 {
				t.Errorf("%s: validated %d", name, v)
			}
			continue
		}
		if d != 0 || v == 0 {
			t.Errorf("%s: %d from disk, %d validated; want none from disk", name, d, v)
		}
	}
}

// The key holds every object's bytes with their lengths, in order: moving bytes from one object to the
// next, reordering objects, or writing an object as YAML rather than JSON is another key.
func TestOFKeySeparatesWhatItHashes(t *testing.T) {
	on := func(string) bool { return true }
	keys := map[[32]byte]string{}
	for name, objs := range map[string][][]byte{
		"ab,c":  {[]byte("ab"), []byte("c")},
		"a,bc":  {[]byte("a"), []byte("bc")},
		"c,ab":  {[]byte("c"), []byte("ab")},
		"abc":   {[]byte("abc")},
		"json":  {[]byte(`{"kind":"X"}`)},
		"yaml":  {[]byte("kind: X\n")},
		"empty": nil,
	} {
		k := ofKey(objectsDigest(objs), "", on)
		if other, dup := keys[k]; dup {
			t.Errorf("%s and %s have one key", name, other)
		}
		keys[k] = name
	}
	objs := objectsDigest([][]byte{[]byte("a")})
	if ofKey(objs, "", on) == ofKey(objs, "1.29", on) {
		t.Error("the Kubernetes version is not in the key")
	}
	if ofKey(objs, "", on) == ofKey(objs, "", func(r string) bool { return r != ruleOFCRD }) {
		t.Error("the rule set is not in the key")
	}
}

// The key names the validators' modules at the versions go.mod requires: updating one is another key.
func TestOFCacheKeyNamesTheValidatorsModules(t *testing.T) {
	data, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	required := map[string]string{}
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && strings.Contains(f[0], ".") && strings.HasPrefix(f[1], "v") {
			required[f[0]] = f[1]
		}
	}
	for _, m := range ofValidatorModules {
		path, version, _ := strings.Cut(m, " ")
		if required[path] != version {
			t.Errorf("ofValidatorModules has %s, go.mod requires %s %s", m, path, required[path])
		}
	}
	for _, path := range []string{"github.com/operator-framework/api", "k8s.io/apiextensions-apiserver"} {
		if !strings.Contains(ofModules(), path+" "+required[path]+"\n") {
			t.Errorf("the key does not name %s %s", path, required[path])
		}
	}
}

// An entry that is not whole, not of this format or not under its own key is a miss; while the
// categories validator reads a file of custom categories, nothing is read from disk.
func TestOFCacheRefusesForeignEntries(t *testing.T) {
	dir := t.TempDir()
	c := NewOFCache(dir)
	key, other := ofKey(objectsDigest([][]byte{[]byte("a")}), "", func(string) bool { return true }), ofKey(objectsDigest(nil), "", func(string) bool { return true })
	want := []ofFinding{{Validator: "csv", Rule: ruleOFCSV, Error: true, Message: "m"}}
	c.write(key, want)
	if got, ok := c.read(key); !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("read back %v, %v", got, ok)
	}
	path := c.path(dir, key)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("categories file", func(t *testing.T) {
		t.Setenv(ofCategoriesEnv, filepath.Join(dir, "categories.json"))
		if _, ok := c.read(key); ok {
			t.Fatal("read from disk while " + ofCategoriesEnv + " is set")
		}
	})
	for name, data := range map[string]string{
		"truncated":      string(good[:len(good)/2]),
		"another key":    strings.Replace(string(good), hexKey(key), hexKey(other), 1),
		"another format": strings.Replace(string(good), ofCacheFormat, "catalogbot-policy-of-0", 1),
		"trailing data":  string(good) + `{"format":"x"}`,
		"unknown field":  strings.Replace(string(good), `"findings"`, `"pass":true,"findings"`, 1),
	} {
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, ok := c.read(key); ok {
			t.Errorf("%s: read as an entry", name)
		}
	}
}

func hexKey(k [32]byte) string { return hex.EncodeToString(k[:]) }

// In memory, one cache serves every run given it (a pull request's head and base, a repository's
// catalogs): the second side validates only what the first did not hold.
func TestOFCacheInMemoryServesTheOtherSide(t *testing.T) {
	base := load(t, "community-operators-prod-v4.16", "coherence-operator")
	head := load(t, "community-operators-prod-v4.16", "coherence-operator")
	editCSV(t, lastBundle(head), func(csv map[string]any) { annotate(csv, "categories", "Nonsense") })
	sev := Severities{ruleOFCategories: diag.Error}
	c := NewOFCache("")
	if ds := runOFCache(t, base, "", sev, c); len(ds) != 0 {
		t.Fatalf("base: %v", ds)
	}
	_, n := c.counts()
	ds := runOFCache(t, head, "", sev, c)
	if len(ds) != 1 || ds[0].Bundle != lastBundle(head).Name || !strings.Contains(ds[0].Message, "Nonsense") {
		t.Fatalf("head: %v", ds)
	}
	if d, v := c.counts(); d != 0 || v != n+1 {
		t.Fatalf("head after base: %d from disk, %d validated in all; want 0 and %d", d, v, n+1)
	}
}

// ofCodeDigests records, per ofCacheFormat, the digest of the code whose findings an entry holds (every
// declaration of ofvalidators.go but those that run after the cache: ofValidate, mergeOF, keepsManifests).
// Changing that code without a new format would let a kept entry of the old code stand for the new.
var ofCodeDigests = map[string]string{
	"catalogbot-policy-of-1": "4c2cdd9d4dac3b8cfde12d9846d92b884e8d597f579eb9e5f0dd18c53a9657ff",
	"catalogbot-policy-of-2": "e2f57a8282721b08deb22b7dc6a137065e92eb31042c33cd8c79ad6e3dd57380", // ofMessage: a value reported by pointer is printed, not its address
}

func TestOFCacheFormatFollowsTheCode(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "ofvalidators.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && slices.Contains([]string{"ofValidate", "mergeOF", "keepsManifests"}, fn.Name.Name) {
			continue
		}
		if err := printer.Fprint(h, fset, d); err != nil {
			t.Fatal(err)
		}
		h.Write([]byte{0})
	}
	got := hex.EncodeToString(h.Sum(nil))
	if want, ok := ofCodeDigests[ofCacheFormat]; !ok || want != got {
		t.Fatalf("the code behind the validators' cache entries changed (digest %s, recorded %q for %s): give ofCacheFormat a new value and record the digest under it in ofCodeDigests", got, want, ofCacheFormat)
	}
}
