// Package types holds the revision types operator-controller's BoxcutterRuntime passes around.
package types

import "sigs.k8s.io/controller-runtime/pkg/client"

type Phase interface {
	GetName() string
	GetObjects() []client.Object
}

type Revision interface {
	GetName() string
	GetRevisionNumber() int64
	GetPhases() []Phase
}

type RevisionReconcileOption interface{ ApplyToRevisionReconcileOptions() }
type RevisionTeardownOption interface{ ApplyToRevisionTeardownOptions() }
type ObjectReconcileOption interface{ ApplyToObjectReconcileOptions() }

// ProbeStatus is the outcome of a probe.
type ProbeStatus string

const (
	ProbeStatusTrue    ProbeStatus = "True"
	ProbeStatusFalse   ProbeStatus = "False"
	ProbeStatusUnknown ProbeStatus = "Unknown"
)

// ProbeResult is a probe's outcome with its reasons.
type ProbeResult struct {
	Status   ProbeStatus
	Messages []string
}
