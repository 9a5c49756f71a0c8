package policy

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
	apierrors "github.com/operator-framework/api/pkg/validation/errors"
	interfaces "github.com/operator-framework/api/pkg/validation/interfaces"
	"sigs.k8s.io/yaml"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/internal/shareddata"
	renderbundle "github.com/catalogbot/catalogbot/render/bundle"
)

// The policy-of-* rules give, on every shared bundle, the verdicts operator-sdk gives: no finding missed,
// none doubled. The reference side is operator-sdk's own code path (internal/cmd/operator-sdk/bundle/validate
// and internal/registry/validate.go): the api module's manifests loader reads the bundle's manifests/
// directory (getBundleDataFromDir: not metadata/, so no package or channels), then the default validators
// run on the bundle, its CSV and its CRDs, and the suite's (operatorframework) validators on every object.
// Our side goes through the catalog: the bundle rendered to FBC by catalogbot's renderer
// (olm.bundle.object), in a package and channels as its annotations declare, then the policy stage. What
// operator-sdk prints once per validator with the same level and text (the csv and operatorhubv2
// validators' minKubeVersion warning) is one problem: the policy reports it once, naming both validators.
// So the two sides must list the same problems (level and message text), each with the same validators.
func TestOperatorFrameworkValidatorsMatchOperatorSDK(t *testing.T) {
	root := shareddata.Dir(t, "bundles")
	var dirs []string // every directory holding manifests/ and metadata/ (the edge cases nest one deeper)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == "manifests" {
			if _, e := os.Stat(filepath.Join(filepath.Dir(p), "metadata")); e == nil {
				dirs = append(dirs, p)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 37 {
		t.Fatalf("found %d bundles under %s, want the 36 the shared data's README lists and its edge case", len(dirs), root)
	}
	findings := 0
	for _, m := range dirs {
		dir := filepath.Dir(m)
		name, _ := filepath.Rel(root, dir)
		t.Run(name, func(t *testing.T) {
			for _, kube := range []string{"", "1.25"} {
				want := normalize(referenceVerdicts(t, dir, kube))
				got := normalize(catalogVerdicts(t, dir, kube))
				if !slices.Equal(got, want) {
					t.Errorf("k8s-version %q: the policy stage (-) and operator-sdk (+) differ:\n%s", kube, lineDiff(got, want))
				}
				findings += len(want)
			}
		})
	}
	if findings == 0 {
		t.Fatal("no validator found anything in any shared bundle: the comparison proves nothing")
	}
	t.Logf("%d bundles, %d findings compared", len(dirs), findings)
}

// referenceVerdicts runs the validators on the bundle directory as operator-sdk bundle validate
// --select-optional suite=operatorframework [--optional-values=k8s-version=kube] does.
func referenceVerdicts(t *testing.T, dir, kube string) []string {
	t.Helper()
	b, err := manifests.GetBundleFromDir(filepath.Join(dir, "manifests")) // no metadata/ label in the shared bundles moves it
	if err != nil {
		t.Fatalf("manifests.GetBundleFromDir(%s): %v", dir, err)
	}
	byProblem := map[string][]string{} // "level message" -> the validators that reported it
	var order []string
	add := func(name string, results []apierrors.ManifestResult) {
		for _, r := range results {
			for _, e := range append(r.Errors, r.Warnings...) {
				key := fmt.Sprintf("%s %s", e.Level, e.Error())
				if _, seen := byProblem[key]; !seen {
					order = append(order, key)
				}
				if !slices.Contains(byProblem[key], name) {
					byProblem[key] = append(byProblem[key], name)
				}
			}
		}
	}
	// ValidateBundleContent: the bundle, its CSV, its CRDs together.
	add("bundle", validation.BundleValidator.Validate(b))
	add("csv", validation.ClusterServiceVersionValidator.Validate(b.CSV))
	var crds []any
	for _, crd := range b.V1beta1CRDs {
		crds = append(crds, crd)
	}
	for _, crd := range b.V1CRDs {
		crds = append(crds, crd)
	}
	if len(crds) > 0 {
		add("crd", validation.CustomResourceDefinitionValidator.Validate(crds...))
	}
	// runOptionalValidators: every object, then the optional values.
	objs := b.ObjectsToValidate()
	for _, o := range b.Objects {
		objs = append(objs, o)
	}
	values := map[string]string{}
	if kube != "" {
		values["k8s-version"] = kube
	}
	objs = append(objs, values)
	for _, v := range []struct {
		name string
		v    interfaces.Validator
	}{
		{"operatorhubv2", validation.OperatorHubV2Validator},
		{"capabilities", validation.StandardCapabilitiesValidator},
		{"categories", validation.StandardCategoriesValidator},
		{"alpha-deprecated-apis", validation.AlphaDeprecatedAPIsValidator},
		{"good-practices", validation.GoodPracticesValidator},
	} {
		add(v.name, v.v.Validate(objs...))
	}
	var out []string
	for _, key := range order {
		out = append(out, strings.Join(byProblem[key], ", ")+" "+key)
	}
	slices.Sort(out)
	return out
}

// catalogVerdicts renders the bundle directory with catalogbot's renderer into a catalog (the package and
// channels its annotations name) and runs the policy stage's policy-of-* rules on it.
func catalogVerdicts(t *testing.T, dir, kube string) []string {
	t.Helper()
	b, err := renderbundle.RenderDir(context.Background(), dir, "quay.io/example/bundle:v1")
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "metadata", "annotations.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var ann struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(data, &ann); err != nil {
		t.Fatal(err)
	}
	c := &catalog.Catalog{Bundles: []*catalog.Bundle{b},
		Packages: []*catalog.Package{{Schema: "olm.package", Name: b.Package, DefaultChannel: ann.Annotations["operators.operatorframework.io.bundle.channel.default.v1"]}}}
	for _, ch := range strings.Split(ann.Annotations["operators.operatorframework.io.bundle.channels.v1"], ",") {
		c.Channels = append(c.Channels, &catalog.Channel{Schema: "olm.channel", Name: ch, Package: b.Package, Entries: []catalog.ChannelEntry{{Name: b.Name}}})
	}
	sev := Severities{}
	for _, id := range ofRules {
		sev[id] = diag.Error
	}
	res, err := Run(context.Background(), Input{Catalog: c, Kubernetes: kube, MaxPerRule: -1}, sev)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	prefix := fmt.Sprintf("bundle %q: ", b.Name)
	for _, d := range res.Diagnostics {
		name, rest, ok := strings.Cut(strings.TrimPrefix(d.Message, "["), "] ")
		msg, found := strings.CutPrefix(rest, prefix)
		if !ok || !found {
			t.Fatalf("%s: not a validator's finding: %s", d.Rule, d.Message)
		}
		level := apierrors.LevelWarn
		if d.Severity == diag.Error {
			level = apierrors.LevelError
		}
		out = append(out, fmt.Sprintf("%s %s %s", name, level, msg))
	}
	slices.Sort(out)
	return out
}

// channelList is good-practices' list of channels, which it prints in map order (getUniqueValues).
var channelList = regexp.MustCompile(`channel\(s\) \[([^]]*)\]`)

// normalize sorts what a validator prints in random order, so that two runs of it compare equal.
func normalize(verdicts []string) []string {
	for i, v := range verdicts {
		verdicts[i] = channelList.ReplaceAllStringFunc(v, func(m string) string {
			names := strings.Fields(channelList.FindStringSubmatch(m)[1])
			slices.Sort(names)
			return "channel(s) [" + strings.Join(names, " ") + "]"
		})
	}
	slices.Sort(verdicts)
	return verdicts
}

func lineDiff(got, want []string) string {
	var b strings.Builder
	for _, g := range got {
		if !slices.Contains(want, g) {
			fmt.Fprintf(&b, "- %s\n", g)
		}
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			fmt.Fprintf(&b, "+ %s\n", w)
		}
	}
	return b.String()
}
