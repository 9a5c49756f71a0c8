package images

import (
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Policy is what a repository requires of the images its catalog references, beyond existing.
type Policy struct {
	// RequireDigest flags references by tag: they must be pinned as REPO@sha256:....
	RequireDigest bool
	// AllowedRegistries, when not empty, lists the only registry hosts images may come from ("quay.io",
	// "registry.example.com:5000"; "docker.io" means Docker Hub). Images elsewhere are flagged and their
	// registries are never contacted.
	AllowedRegistries []string
	// RequiredPlatforms lists "os/arch[/variant]" every image must provide ("linux/amd64"). Checking them
	// costs a manifest GET instead of a HEAD, and a config blob GET for single-platform images.
	RequiredPlatforms []string
}

// compiledPolicy is a Policy parsed once per Check.
type compiledPolicy struct {
	requireDigest bool
	allowed       map[string]bool // normalized registry hosts; nil allows all
	allowedList   string          // for messages
	platforms     []v1.Platform
}

func compilePolicy(p Policy) (*compiledPolicy, error) {
	cp := &compiledPolicy{requireDigest: p.RequireDigest}
	var errs []error
	if len(p.AllowedRegistries) > 0 {
		cp.allowed = map[string]bool{}
		for _, host := range p.AllowedRegistries {
			reg, err := name.NewRegistry(strings.ToLower(strings.TrimSpace(host)))
			if err != nil {
				errs = append(errs, fmt.Errorf("allowed registry %q: %w", host, err))
				continue
			}
			cp.allowed[reg.RegistryStr()] = true
		}
		cp.allowedList = strings.Join(p.AllowedRegistries, ", ")
	}
	for _, s := range p.RequiredPlatforms {
		pl, err := v1.ParsePlatform(s)
		if err == nil && (pl.OS == "" || pl.Architecture == "") {
			err = errors.New("want os/arch[/variant]")
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("required platform %q: %w", s, err))
			continue
		}
		cp.platforms = append(cp.platforms, *pl)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("image policy: %w", err)
	}
	return cp, nil
}

// registryAllowed reports whether images on reg may be used (and its registry contacted).
func (cp *compiledPolicy) registryAllowed(reg name.Registry) bool {
	return cp.allowed == nil || cp.allowed[strings.ToLower(reg.RegistryStr())]
}
