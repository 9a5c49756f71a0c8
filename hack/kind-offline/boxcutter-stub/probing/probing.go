// Package probing: the progression probes of a ClusterObjectSet. In this build nothing runs them (the
// BoxcutterRuntime engines answer ErrUnavailable); a probe asked anyway answers Unknown and says why.
package probing

import (
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"pkg.package-operator.run/boxcutter/machinery/types"
)

type Prober interface {
	Probe(obj client.Object) types.ProbeResult
}

var unavailable = types.ProbeResult{Status: types.ProbeStatusUnknown, Messages: []string{"probes are not available in this build"}}

type And []Prober

func (And) Probe(client.Object) types.ProbeResult { return unavailable }

type ConditionProbe struct{ Type, Status string }

func (*ConditionProbe) Probe(client.Object) types.ProbeResult { return unavailable }

type FieldsEqualProbe struct{ FieldA, FieldB string }

func (*FieldsEqualProbe) Probe(client.Object) types.ProbeResult { return unavailable }

type FieldValueProbe struct{ FieldPath, Value string }

func (*FieldValueProbe) Probe(client.Object) types.ProbeResult { return unavailable }

type GroupKindSelector struct {
	schema.GroupKind
	Prober
}

type LabelSelector struct {
	Selector labels.Selector
	Prober
}

type ObservedGenerationProbe struct {
	Prober
}
