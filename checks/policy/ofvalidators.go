package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"unicode"

	"github.com/operator-framework/api/pkg/encoding"
	"github.com/operator-framework/api/pkg/manifests"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/api/pkg/validation"
	apierrors "github.com/operator-framework/api/pkg/validation/errors"
	interfaces "github.com/operator-framework/api/pkg/validation/interfaces"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
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

// OFFinding is one error or warning of operator-framework's validators.
type OFFinding struct {
	Validator string // operator-sdk's name for it (ofValidator.name)
	Rule      string
	Error     bool   // apierrors.LevelError; else a warning
	Message   string // apierrors.Error.Error(), as operator-sdk prints it
}

// OFBundle builds the bundle operator-framework's validators read from a bundle's manifests as the
// catalog stores them (olm.bundle.object data), as its manifests loader (manifests.GetBundleFromDir)
// builds one from the files: every object unstructured, the CSV and the CRDs typed as well, and the sizes.
// pkg, channels and defaultChannel are what the bundle's annotations would say.
func OFBundle(objects [][]byte, pkg string, channels []string, defaultChannel string) (*manifests.Bundle, error) {
	b := &manifests.Bundle{Package: pkg, Channels: channels, DefaultChannel: defaultChannel}
	objects = slices.Clone(objects)
	for i, data := range objects {
		if t := bytes.TrimLeftFunc(data, unicode.IsSpace); len(t) == 0 || t[0] != '{' {
			js, err := yaml.YAMLToJSON(data) // opm stores objects as JSON; a hand-written catalog may not
			if err != nil {
				return nil, fmt.Errorf("bundle object %d: %w", i+1, err)
			}
			data, objects[i] = js, js
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return nil, fmt.Errorf("bundle object %d: %w", i+1, err)
		}
		b.Objects = append(b.Objects, u)
		b.Size += int64(len(data))
		b.CompressedSize += gzipBase64Bound(len(data))
		switch u.GetKind() {
		case operatorsv1alpha1.ClusterServiceVersionKind:
			if b.CSV != nil {
				return nil, fmt.Errorf("the bundle holds two ClusterServiceVersions (%s and %s)", b.CSV.Name, u.GetName())
			}
			csv := &operatorsv1alpha1.ClusterServiceVersion{}
			if err := json.Unmarshal(data, csv); err != nil {
				return nil, fmt.Errorf("ClusterServiceVersion %q: %w", u.GetName(), err)
			}
			b.CSV, b.Name = csv, u.GetName()
		case "CustomResourceDefinition":
			switch v := u.GetAPIVersion(); v {
			case apiextensionsv1beta1.SchemeGroupVersion.String():
				crd := &apiextensionsv1beta1.CustomResourceDefinition{}
				if err := json.Unmarshal(data, crd); err != nil {
					return nil, fmt.Errorf("CustomResourceDefinition %q: %w", u.GetName(), err)
				}
				b.V1beta1CRDs = append(b.V1beta1CRDs, crd)
			case apiextensionsv1.SchemeGroupVersion.String():
				crd := &apiextensionsv1.CustomResourceDefinition{}
				if err := json.Unmarshal(data, crd); err != nil {
					return nil, fmt.Errorf("CustomResourceDefinition %q: %w", u.GetName(), err)
				}
				b.V1CRDs = append(b.V1CRDs, crd)
			default:
				return nil, fmt.Errorf("CustomResourceDefinition %q: unsupported version %s", u.GetName(), v)
			}
		}
	}
	if b.CSV == nil {
		return nil, fmt.Errorf("no ClusterServiceVersion among the bundle's %d objects", len(objects))
	}
	// The bundle validator reads the gzipped size only to compare it with 85% of its limit: the exact
	// size is needed only when a bound of it is over that.
	if float64(b.CompressedSize) > ofSizeWarnFraction*float64(ofMaxBundleSize) {
		b.CompressedSize = 0
		for i, data := range objects {
			gz, err := encoding.GzipBase64Encode(data)
			if err != nil {
				return nil, fmt.Errorf("bundle object %d: %w", i+1, err)
			}
			b.CompressedSize += int64(len(gz))
		}
	}
	return b, nil
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

// RunOFValidators runs the validators whose rule on accepts on b (OFBundle's) the way operator-sdk does:
// the default ones on the bundle, its CSV and its CRDs together, the optional ones on every object with
// k8s-version (--optional-values) when kube is known. A validator that panics on hostile input is
// reported as its own error, never as a pass.
func RunOFValidators(b *manifests.Bundle, kube string, on func(rule string) bool) []OFFinding {
	var out []OFFinding
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
		results, err := runValidator(v.v, args)
		if err != nil {
			out = append(out, OFFinding{Validator: v.name, Rule: v.rule, Error: true, Message: err.Error()})
			continue
		}
		for _, res := range results {
			for _, e := range res.Errors {
				out = append(out, OFFinding{Validator: v.name, Rule: v.rule, Error: true, Message: e.Error()})
			}
			for _, e := range res.Warnings {
				out = append(out, OFFinding{Validator: v.name, Rule: v.rule, Error: e.Level == apierrors.LevelError, Message: e.Error()})
			}
		}
	}
	return out
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
// (olm.bundle.object). Each finding is a diagnostic of its validator's rule: an error of the validator at
// the rule's severity, a warning as a warning.
func (r *run) ofValidate() {
	if !r.on(ofRules...) {
		return
	}
	on := func(rule string) bool { return r.sev[rule] != "" }
	for _, p := range r.ix.order {
		channelsOf := map[string][]string{}
		for _, ch := range p.channels {
			for _, e := range ch.Entries {
				channelsOf[e.Name] = append(channelsOf[e.Name], ch.Name)
			}
		}
		defaultChannel := ""
		if p.pkg != nil {
			defaultChannel = p.pkg.DefaultChannel
		}
		for _, bi := range p.bundles {
			if err := r.ctx.Err(); err != nil {
				return
			}
			b := bi.b
			c := r.contentOf(b)
			if len(c.manifests) == 0 {
				continue
			}
			f := finding{pos: b.Pos, pkg: p.name, bundle: b.Name}
			ob, err := OFBundle(c.manifests, p.name, slices.Clone(channelsOf[b.Name]), defaultChannel)
			c.manifests = nil // read once; a catalog's worth of manifests is not kept
			if err != nil {
				// what does not decode is validate's finding; a bundle without a CSV object is judged by
				// the bundle validator's rule
				f.rule, f.msg = ruleOFBundle, fmt.Sprintf("operator-framework's validators cannot read bundle %q: %v", b.Name, err)
				f.hint = "fix the bundle's manifests and rebuild it"
				r.add(f)
				continue
			}
			for _, o := range RunOFValidators(ob, r.in.Kubernetes, on) {
				f.rule = o.Rule
				f.msg = fmt.Sprintf("[%s] bundle %q: %s", o.Validator, b.Name, o.Message)
				f.hint = "operator-sdk bundle validate --select-optional suite=operatorframework reports the same; fix the bundle's manifests"
				if o.Error {
					r.add(f)
				} else {
					r.addWarning(f)
				}
			}
		}
	}
}

// keepsManifests reports whether an enabled rule needs the bundles' manifests themselves.
func (s Severities) keepsManifests() bool {
	return slices.ContainsFunc(ofRules, func(id string) bool { return s[id] != "" })
}
