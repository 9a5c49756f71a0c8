// Package ownerhandling: the owner-reference strategy a BoxcutterRuntime revision names.
package ownerhandling

import "k8s.io/apimachinery/pkg/runtime"

// Native sets owners as native ownerReferences.
type Native struct{ scheme *runtime.Scheme }

func NewNative(scheme *runtime.Scheme) *Native { return &Native{scheme: scheme} }
