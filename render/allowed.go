package render

import (
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/catalogbot/catalogbot/diag"
)

// allowList is Options.AllowedRegistries, normalized as the images check does ("docker.io" is Docker Hub).
type allowList struct {
	hosts map[string]bool // nil: every registry
	list  string
}

func compileAllowList(hosts []string) (allowList, error) {
	if len(hosts) == 0 {
		return allowList{}, nil
	}
	a := allowList{hosts: map[string]bool{}, list: strings.Join(hosts, ", ")}
	var errs []error
	for _, h := range hosts {
		reg, err := name.NewRegistry(strings.ToLower(strings.TrimSpace(h)))
		if err != nil {
			errs = append(errs, fmt.Errorf("allowed registry %q: %w", h, err))
			continue
		}
		a.hosts[reg.RegistryStr()] = true
	}
	if err := errors.Join(errs...); err != nil {
		return allowList{}, diag.UsageError(err)
	}
	return a, nil
}

// check refuses an image on a registry outside the list, before anything contacts it.
func (a allowList) check(ref name.Reference) error {
	reg := ref.Context().RegistryStr()
	if a.hosts == nil || a.hosts[strings.ToLower(reg)] {
		return nil
	}
	return ruleErr("registry-not-allowed", "the repository's configuration allows images only from "+a.list,
		diag.InvalidError(fmt.Errorf("registry %s is not an allowed registry (allowed: %s); it was not contacted", reg, a.list)))
}
