// Package validation: the revision validators the BoxcutterRuntime's engines take (see machinery).
package validation

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

type RevisionValidator struct{}

func NewRevisionValidator() *RevisionValidator { return &RevisionValidator{} }

type ClusterPhaseValidator struct{}

func NewClusterPhaseValidator(meta.RESTMapper, client.Client) *ClusterPhaseValidator {
	return &ClusterPhaseValidator{}
}
