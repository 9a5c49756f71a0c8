package policy

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/operator-framework/api/pkg/encoding"
	"github.com/operator-framework/api/pkg/manifests"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/api/pkg/validation"
	apierrors "github.com/operator-framework/api/pkg/validation/errors"
	interfaces "github.com/operator-framework/api/pkg/validation/interfaces"
	"golang.org/x/sync/errgroup"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/catalogbot/catalogbot/catalog"
)

// operator-framework's validators (github.com/operator-framework/api/pkg/validation), one rule each, run
// as `operator-sdk bundle validate --select-optional suite=operatorframework` runs them: the default
// bundle, CSV and CRD validators, then the suite's optional ones on every object of the bundle.
const (
	ruleOFBundle         = "policy-of-bundle"
	ruleOFCSV            = "policy-of-csv"
	ruleOFCRD            = "policy-of-crd"
	ruleOFOperatorHub    = "policy-of-operatorhub"
	ruleOFCapabilities   = "policy-of-capabilities"
	ruleOFCategories     = "policy-of-categories"
	ruleOFDeprecatedAPIs = "policy-of-deprecated-apis"
	ruleOFGoodPractices  = "policy-of-good-practices"
)

// ofValidator is one of operator-framework's validators: the rule that runs it and the name operator-sdk
// gives it (`operator-sdk bundle validate --list-optional`; the default ones are named here).
type ofValidator struct {
	rule, name string
	v          interfaces.Validator
	// optional: one of the suite's, run on every object; else a default validator, run on its own kind.
	optional bool
}

// OFValidators are the validators the suite runs, in operator-sdk's order.
var ofValidators = []ofValidator{
	{ruleOFBundle, "bundle", validation.BundleValidator, false},
	{ruleOFCSV, "csv", validation.ClusterServiceVersionValidator, false},
	{ruleOFCRD, "crd", validation.CustomResourceDefinitionValidator, false},
	{ruleOFOperatorHub, "operatorhubv2", validation.OperatorHubV2Validator, true},
	{ruleOFCapabilities, "capabilities", validation.StandardCapabilitiesValidator, true},
	{ruleOFCategories, "categories", validation.StandardCategoriesValidator, true},
	{ruleOFDeprecatedAPIs, "alpha-deprecated-apis", validation.AlphaDeprecatedAPIsValidator, true},
	{ruleOFGoodPractices, "good-practices", validation.GoodPracticesValidator, true},
}

var ofRules = func() []string {
	ids := make([]string, len(ofValidators))
	for i, v := range ofValidators {
		ids[i] = v.rule
	}
	return ids
}()

// ofFinding is one error or warning of operator-framework's validators.
type ofFinding struct {
	Validator string // operator-sdk's name for it (ofValidator.name)
	Rule      string
	Error     bool   // apierrors.LevelError; else a warning
	Message   string // apierrors.Error.Error(), as operator-sdk prints it
}

// ofBundle builds the bundle operator-framework's validators read from a bundle's manifests as the
// catalog stores them (olm.bundle.object data), as its manifests loader (manifests.GetBundleFromDir)
// builds one from the files: every object unstructured, the CSV and the CRDs typed as well, and the sizes.
// Like operator-sdk, which loads the bundle's manifests/ directory only (getBundleDataFromDir), it gives
// the bundle no package, channels or default channel: the annotations that name them are in metadata/,
// so the good-practices validator's channel-name warnings and the bundle validator's release-name check
// see what they see under operator-sdk.
func ofBundle(objects [][]byte) (*manifests.Bundle, map[any][32]byte, error) {
	keys := map[any][32]byte{} // each typed CRD's manifest digest, for crdCache
	b := &manifests.Bundle{}
	objects = slices.Clone(objects)
	for i, data := range objects {
		if t := bytes.TrimLeftFunc(data, unicode.IsSpace); len(t) == 0 || t[0] != '{' {
			js, err := yaml.YAMLToJSON(data) // opm stores objects as JSON; a hand-written catalog may not
			if err != nil {
				return nil, nil, fmt.Errorf("bundle object %d: %w", i+1, err)
			}
			data, objects[i] = js, js
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return nil, nil, fmt.Errorf("bundle object %d: %w", i+1, err)
		}
		b.Objects = append(b.Objects, u)
		b.Size += int64(len(data))
		b.CompressedSize += gzipBase64Bound(len(data))
		switch u.GetKind() {
		case operatorsv1alpha1.ClusterServiceVersionKind:
			if b.CSV != nil {
				return nil, nil, fmt.Errorf("the bundle holds two ClusterServiceVersions (%s and %s)", b.CSV.Name, u.GetName())
			}
			csv := &operatorsv1alpha1.ClusterServiceVersion{}
			if err := json.Unmarshal(data, csv); err != nil {
				return nil, nil, fmt.Errorf("ClusterServiceVersion %q: %w", u.GetName(), err)
			}
			b.CSV, b.Name = csv, u.GetName()
		case "CustomResourceDefinition":
			switch v := u.GetAPIVersion(); v {
			case apiextensionsv1beta1.SchemeGroupVersion.String():
				crd := &apiextensionsv1beta1.CustomResourceDefinition{}
				if err := json.Unmarshal(data, crd); err != nil {
					return nil, nil, fmt.Errorf("CustomResourceDefinition %q: %w", u.GetName(), err)
				}
				b.V1beta1CRDs, keys[crd] = append(b.V1beta1CRDs, crd), sha256.Sum256(data)
			case apiextensionsv1.SchemeGroupVersion.String():
				crd := &apiextensionsv1.CustomResourceDefinition{}
				if err := json.Unmarshal(data, crd); err != nil {
					return nil, nil, fmt.Errorf("CustomResourceDefinition %q: %w", u.GetName(), err)
				}
				b.V1CRDs, keys[crd] = append(b.V1CRDs, crd), sha256.Sum256(data)
			default:
				return nil, nil, fmt.Errorf("CustomResourceDefinition %q: unsupported version %s", u.GetName(), v)
			}
		}
	}
	if b.CSV == nil {
		return nil, nil, fmt.Errorf("no ClusterServiceVersion among the bundle's %d objects", len(objects))
	}
	// The bundle validator reads the gzipped size only to compare it with 85% of its limit: the exact
	// size is needed only when a bound of it is over that.
	if float64(b.CompressedSize) > ofSizeWarnFraction*float64(ofMaxBundleSize) {
		b.CompressedSize = 0
		for i, data := range objects {
			gz, err := encoding.GzipBase64Encode(data)
			if err != nil {
				return nil, nil, fmt.Errorf("bundle object %d: %w", i+1, err)
			}
			b.CompressedSize += int64(len(gz))
		}
	}
	return b, keys, nil
}

// The bundle validator's limit on the gzipped, base64 bundle, and the fraction of it it warns from
// (operator-framework/api's validateBundleSize).
const (
	ofMaxBundleSize    = 1 << 20
	ofSizeWarnFraction = 0.85
)

// gzipBase64Bound is at least the size encoding.GzipBase64Encode gives n bytes: deflate stores what it
// cannot compress in blocks of at most 65,535 bytes with 5 bytes of header, gzip adds 18 bytes, and base64
// makes 4 bytes of each 3.
func gzipBase64Bound(n int) int64 {
	z := int64(n) + 5*(int64(n)/65535+1) + 18
	return (z + 2) / 3 * 4
}

// runOF runs the validators whose rule on accepts on b (ofBundle's) the way operator-sdk does:
// the default ones on the bundle, its CSV and its CRDs together, the optional ones on every object with
// k8s-version (--optional-values) when kube is known. A validator that panics on hostile input is
// reported as its own error, never as a pass.
func runOF(b *manifests.Bundle, keys map[any][32]byte, cache *crdCache, kube string, on func(rule string) bool) []ofFinding {
	var out []ofFinding
	optional := map[string]string{}
	if kube != "" {
		optional["k8s-version"] = kube
	}
	objs := b.ObjectsToValidate()
	for _, o := range b.Objects {
		objs = append(objs, o)
	}
	objs = append(objs, optional)
	var crds []any
	for _, crd := range b.V1beta1CRDs {
		crds = append(crds, crd)
	}
	for _, crd := range b.V1CRDs {
		crds = append(crds, crd)
	}
	for _, v := range ofValidators {
		if !on(v.rule) {
			continue
		}
		var args []any
		switch {
		case v.optional:
			args = objs
		case v.rule == ruleOFBundle:
			args = []any{b}
		case v.rule == ruleOFCSV:
			args = []any{b.CSV}
		case v.rule == ruleOFCRD:
			if len(crds) == 0 {
				continue
			}
			args = crds
		}
		var results []apierrors.ManifestResult
		var err error
		if v.rule == ruleOFCRD {
			results, err = cache.validate(args, keys)
		} else {
			results, err = runValidator(v.v, args)
		}
		if err != nil {
			out = append(out, ofFinding{Validator: v.name, Rule: v.rule, Error: true, Message: err.Error()})
			continue
		}
		for _, res := range results {
			for _, e := range res.Errors {
				out = append(out, ofFinding{Validator: v.name, Rule: v.rule, Error: true, Message: ofMessage(e)})
			}
			for _, e := range res.Warnings {
				out = append(out, ofFinding{Validator: v.name, Rule: v.rule, Error: e.Level == apierrors.LevelError, Message: ofMessage(e)})
			}
		}
	}
	return out
}

// ofMessage is e's text as operator-sdk prints it, but for a value the validator reports by pointer (the
// CRD validator's spec.preserveUnknownFields, a *bool), which operator-sdk prints as its address: the
// value it points to is printed instead, so that a report says the same from run to run.
func ofMessage(e apierrors.Error) string {
	if v := reflect.ValueOf(e.BadValue); v.Kind() == reflect.Pointer && !v.IsNil() {
		e.BadValue = v.Elem().Interface()
	}
	return e.Error()
}

// crdCache holds the CRD validator's result for each CRD manifest (by digest) a run has validated: the
// bundles of a package mostly ship the same CRDs, and the validator (apiextensions' own, through a
// conversion to the internal type) is most of what the validators cost.
type crdCache struct {
	mu sync.Mutex
	m  map[[32]byte]apierrors.ManifestResult
}

// validate runs the CRD validator on crds as one call on them all would: each CRD is validated on its
// own (validateCRDs), after the defaulting that call applies to it, which later validators see.
func (c *crdCache) validate(crds []any, keys map[any][32]byte) ([]apierrors.ManifestResult, error) {
	var out []apierrors.ManifestResult
	for _, crd := range crds {
		key, ok := keys[crd]
		c.mu.Lock()
		res, hit := c.m[key]
		c.mu.Unlock()
		if ok && hit {
			switch crd := crd.(type) {
			case *apiextensionsv1.CustomResourceDefinition:
				apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(crd)
			case *apiextensionsv1beta1.CustomResourceDefinition:
				apiextensionsv1beta1.SetObjectDefaults_CustomResourceDefinition(crd)
			}
			out = append(out, res)
			continue
		}
		results, err := runValidator(validation.CustomResourceDefinitionValidator, []any{crd})
		if err != nil {
			return nil, err
		}
		out = append(out, results...)
		if ok && len(results) == 1 {
			c.mu.Lock()
			c.m[key] = results[0]
			c.mu.Unlock()
		}
	}
	return out, nil
}

func runValidator(v interfaces.Validator, args []any) (results []apierrors.ManifestResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the validator failed on this bundle: %v", p)
		}
	}()
	return v.Validate(args...), nil
}

// ofValidate runs operator-framework's validators on each checked bundle whose objects the catalog holds
// (olm.bundle.object), a bundle per core at a time, each distinct bundle once (Input.OFCache). Each
// finding is a diagnostic of its validator's rule: an error of the validator at the rule's severity, a
// warning as a warning.
func (r *run) ofValidate() {
	if !r.on(ofRules...) {
		return
	}
	type job struct {
		f   finding
		b   *catalog.Bundle
		c   *content
		out []ofFinding
		err error
	}
	var jobs []*job
	for _, p := range r.ix.order {
		for _, bi := range p.bundles {
			if c := r.contentOf(bi.b); c.read > 0 {
				jobs = append(jobs, &job{f: finding{pos: bi.b.Pos, pkg: p.name, bundle: bi.b.Name}, b: bi.b, c: c})
			}
		}
	}
	on := func(rule string) bool { return r.sev[rule] != "" }
	cache := r.in.OFCache
	if cache == nil {
		cache = NewOFCache("")
	}
	reread := newRereader(r.in.Reread)
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, j := range jobs {
		if r.ctx.Err() != nil {
			break
		}
		g.Go(func() error {
			manifests := j.c.manifests
			j.c.manifests = nil // read once: a catalog's worth of manifests is not kept
			j.out, j.err = cache.findings(ofKey(j.c.digest, r.in.Kubernetes, on), func() ([]ofFinding, error) {
				if manifests == nil { // a Collector's content: only the digest was kept
					var err error
					if manifests, err = reread.manifests(r.ctx, j.b, j.c.digest); err != nil {
						return nil, err
					}
				}
				ob, keys, err := ofBundle(manifests)
				if err != nil {
					return nil, err
				}
				return runOF(ob, keys, cache.crds, r.in.Kubernetes, on), nil
			})
			return nil
		})
	}
	_ = g.Wait()
	if r.ctx.Err() != nil {
		return
	}
	for _, j := range jobs {
		if isRereadError(j.err) { // the run cannot judge the bundle: never a pass, whatever rules are on
			r.failed = fmt.Errorf("operator-framework's validators on bundle %q: %w", j.f.bundle, j.err)
			return
		}
	}
	for _, j := range jobs {
		f := j.f
		if j.err != nil {
			// what does not decode is validate's finding; a bundle the validators cannot read (no CSV
			// object, two of them, a CSV or CRD that does not decode into its type) is the bundle rule's
			f.rule, f.msg = ruleOFBundle, fmt.Sprintf("operator-framework's validators cannot read bundle %q: %v", f.bundle, j.err)
			f.hint = "fix the bundle's manifests and rebuild it"
			r.add(f)
			continue
		}
		r.ofJudged[j.b] = true
		for _, o := range mergeOF(j.out) {
			f.rule = o.Rule
			f.msg = fmt.Sprintf("[%s] bundle %q: %s", o.Validator, f.bundle, o.Message)
			f.hint = "operator-sdk bundle validate --select-optional suite=operatorframework reports the same; fix the bundle's manifests"
			if o.Error {
				r.add(f)
			} else {
				r.addWarning(f)
			}
		}
	}
}

// mergeOF makes one finding of the findings of one bundle that say the same (level and text) from
// several validators: the csv and operatorhubv2 validators both report a missing or invalid
// minKubeVersion, in the same words. The finding names every validator that reported it ("csv,
// operatorhubv2") and keeps the rule of the first, in operator-sdk's order.
func mergeOF(in []ofFinding) []ofFinding {
	var out []ofFinding
	at := map[[2]string]int{}
	for _, o := range in {
		key := [2]string{fmt.Sprint(o.Error), o.Message}
		i, seen := at[key]
		if !seen {
			at[key] = len(out)
			out = append(out, o)
			continue
		}
		if !slices.Contains(strings.Split(out[i].Validator, ", "), o.Validator) {
			out[i].Validator += ", " + o.Validator
		}
	}
	return out
}

// keepsManifests reports whether an enabled rule needs the bundles' manifests themselves.
func (s Severities) keepsManifests() bool {
	return slices.ContainsFunc(ofRules, func(id string) bool { return s[id] != "" })
}
