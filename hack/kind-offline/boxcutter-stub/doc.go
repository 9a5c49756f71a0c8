// Package boxcutter is catalogbot's offline stand-in for the revision API operator-controller's
// experimental BoxcutterRuntime feature uses. That feature is off in OLM v1's standard feature set, and
// this build cannot run it: the engines in machinery answer ErrUnavailable.
package boxcutter

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"pkg.package-operator.run/boxcutter/machinery/types"
	"pkg.package-operator.run/boxcutter/probing"
)

// ProgressProbeType names the probe that decides whether a revision has rolled out.
const ProgressProbeType = "progress"

type (
	Phase                   = types.Phase
	RevisionReconcileOption = types.RevisionReconcileOption
	ObjectReconcileOption   = types.ObjectReconcileOption
)

// RevisionBuilder is a revision as operator-controller builds it.
type RevisionBuilder interface {
	types.Revision
}

type phase struct {
	name string
	objs []client.Object
}

func (p phase) GetName() string             { return p.name }
func (p phase) GetObjects() []client.Object { return p.objs }

// NewPhase returns a phase of objects.
func NewPhase(name string, objs []client.Object) Phase { return phase{name: name, objs: objs} }

type revision struct {
	name   string
	number int64
	phases []Phase
	owner  client.Object
}

func (r revision) GetName() string          { return r.name }
func (r revision) GetRevisionNumber() int64 { return r.number }
func (r revision) GetPhases() []Phase       { return r.phases }
func (r revision) GetOwner() client.Object  { return r.owner }

// NewRevisionWithOwner returns a revision of phases owned by owner; ownerStrategy is not used.
func NewRevisionWithOwner(name string, number int64, phases []Phase, owner client.Object, _ any) RevisionBuilder {
	return revision{name: name, number: number, phases: phases, owner: owner}
}

// The options are accepted and recorded nowhere: the engines that would read them answer ErrUnavailable.
type option struct{}

func (option) ApplyToRevisionReconcileOptions() {}
func (option) ApplyToObjectReconcileOptions()   {}

func WithSiblingOwners([]client.Object) RevisionReconcileOption  { return option{} }
func WithProbe(string, probing.Prober) RevisionReconcileOption   { return option{} }
func WithAggregatePhaseReconcileErrors() RevisionReconcileOption { return option{} }
func WithObjectReconcileOptions(client.Object, ...ObjectReconcileOption) RevisionReconcileOption {
	return option{}
}

// WithCollisionProtection takes operator-controller's CollisionProtection (a string type).
func WithCollisionProtection[T ~string](T) ObjectReconcileOption { return option{} }
