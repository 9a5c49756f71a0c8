package render

import (
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/registry"
)

// allowList is Options.AllowedRegistries, read as the images check reads them (registry.AllowList: hosts
// or host/namespace prefixes).
type allowList struct {
	registry.AllowList
}

func compileAllowList(entries []string) (allowList, error) {
	a, err := registry.CompileAllowList(entries)
	if err != nil {
		return allowList{}, diag.UsageError(err)
	}
	return allowList{a}, nil
}

// check refuses an image outside the list, before anything contacts its registry.
func (a allowList) check(ref name.Reference) error {
	if a.Allows(ref.Context()) {
		return nil
	}
	return ruleErr("registry-not-allowed", "the repository's configuration allows images only from "+a.List,
		diag.InvalidError(fmt.Errorf("registry %s is not an allowed registry for %s (allowed: %s); it was not contacted",
			ref.Context().RegistryStr(), ref.Context().Name(), a.List)))
}
