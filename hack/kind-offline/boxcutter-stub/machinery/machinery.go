// Package machinery: the revision engines of the BoxcutterRuntime, which this build does not provide.
// Every engine answers ErrUnavailable, so a cluster with the BoxcutterRuntime gate on reports it on the
// ClusterObjectSet instead of applying anything.
package machinery

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"pkg.package-operator.run/boxcutter/machinery/types"
	"pkg.package-operator.run/boxcutter/validation"
)

// ErrUnavailable is what every engine of this stand-in answers.
var ErrUnavailable = errors.New("the BoxcutterRuntime is not available in this build (catalogbot's offline boxcutter stand-in)")

// Action is what an engine did to an object.
type Action string

const ActionCollision Action = "Collision"

type ObjectResult interface {
	Action() Action
	Object() client.Object
	ProbeResults() map[string]types.ProbeResult
	String() string
}

type PhaseResult interface {
	GetValidationError() error
	GetObjects() []ObjectResult
	IsComplete() bool
}

type RevisionResult interface {
	GetValidationError() error
	GetPhases() []PhaseResult
	InTransition() bool
	IsComplete() bool
	String() string
}

type RevisionTeardownResult interface {
	IsComplete() bool
}

type Comparator struct{}

func NewComparator(discovery.CachedDiscoveryInterface, *runtime.Scheme, string) *Comparator {
	return &Comparator{}
}

type ObjectEngine struct{}

func NewObjectEngine(*runtime.Scheme, any, client.Client, *Comparator, string, string, string, client.Client) *ObjectEngine {
	return &ObjectEngine{}
}

type PhaseEngine struct{}

func NewPhaseEngine(*ObjectEngine, *validation.ClusterPhaseValidator) *PhaseEngine {
	return &PhaseEngine{}
}

type RevisionEngine struct{}

func NewRevisionEngine(*PhaseEngine, *validation.RevisionValidator, client.Client) *RevisionEngine {
	return &RevisionEngine{}
}

func (*RevisionEngine) Reconcile(context.Context, types.Revision, ...types.RevisionReconcileOption) (RevisionResult, error) {
	return nil, ErrUnavailable
}

func (*RevisionEngine) Teardown(context.Context, types.Revision, ...types.RevisionTeardownOption) (RevisionTeardownResult, error) {
	return nil, ErrUnavailable
}
