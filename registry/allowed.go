package registry

import (
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// AllowList is images.allowedRegistries of .catalogbot.yaml: each entry is a registry host ("quay.io",
// "registry.example.com:5000"; "docker.io" is Docker Hub) or a host/namespace prefix
// ("quay.io/community-operator-pipeline-prod/", as upstream's allowed_bundle_registries are written). An
// image is allowed when its registry is a listed host or its repository lies under a listed prefix, on a
// path boundary (quay.io/ns/ allows quay.io/ns/op, never quay.io/ns-other/op). The zero AllowList allows
// everything.
type AllowList struct {
	hosts    map[string]bool
	prefixes []string // "registry/namespace/", normalized
	// List is the entries as configured, for messages.
	List string
}

// CompileAllowList parses entries; every malformed entry is reported.
func CompileAllowList(entries []string) (AllowList, error) {
	if len(entries) == 0 {
		return AllowList{}, nil
	}
	a := AllowList{hosts: map[string]bool{}, List: strings.Join(entries, ", ")}
	var errs []error
	for _, e := range entries {
		host, ns, _ := strings.Cut(strings.ToLower(strings.TrimSpace(e)), "/")
		if host == "" { // name.NewRegistry("") is Docker Hub: a blank entry must not allow it
			errs = append(errs, fmt.Errorf("allowed registry %q: no registry host", e))
			continue
		}
		reg, err := name.NewRegistry(host)
		if err != nil {
			errs = append(errs, fmt.Errorf("allowed registry %q: %w", e, err))
			continue
		}
		ns = strings.Trim(ns, "/")
		if ns == "" {
			a.hosts[reg.RegistryStr()] = true
			continue
		}
		if _, err := name.NewRepository(reg.RegistryStr() + "/" + ns); err != nil {
			errs = append(errs, fmt.Errorf("allowed registry prefix %q: %w", e, err))
			continue
		}
		a.prefixes = append(a.prefixes, reg.RegistryStr()+"/"+ns+"/")
	}
	if err := errors.Join(errs...); err != nil {
		return AllowList{}, err
	}
	return a, nil
}

// Allows reports whether images of repo may be used (and its registry contacted).
func (a AllowList) Allows(repo name.Repository) bool {
	if a.hosts == nil {
		return true
	}
	reg := strings.ToLower(repo.RegistryStr())
	if a.hosts[reg] {
		return true
	}
	full := reg + "/" + repo.RepositoryStr() + "/"
	for _, p := range a.prefixes {
		if strings.HasPrefix(full, p) {
			return true
		}
	}
	return false
}
