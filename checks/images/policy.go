package images

import (
	"errors"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/catalogbot/catalogbot/registry"
)

// Policy is what a repository requires of the images its catalog references, beyond existing.
type Policy struct {
	// RequireDigest flags references by tag: they must be pinned as REPO@sha256:....
	RequireDigest bool
	// AllowedRegistries, when not empty, lists the only registry hosts ("quay.io",
	// "registry.example.com:5000"; "docker.io" means Docker Hub) or host/namespace prefixes
	// ("quay.io/community-operator-pipeline-prod/") images may come from (registry.AllowList). Images
	// elsewhere are flagged and their registries are never contacted.
	AllowedRegistries []string
	// RequiredPlatforms lists "os/arch[/variant]" every image must provide ("linux/amd64"). Checking them
	// costs a manifest GET instead of a HEAD, and a config blob GET for single-platform images.
	RequiredPlatforms []string
}

// compiledPolicy is a Policy parsed once per Check.
type compiledPolicy struct {
	requireDigest bool
	allowed       registry.AllowList // the zero list allows all
	platforms     []v1.Platform
}

func compilePolicy(p Policy) (*compiledPolicy, error) {
	cp := &compiledPolicy{requireDigest: p.RequireDigest}
	var errs []error
	allowed, err := registry.CompileAllowList(p.AllowedRegistries)
	if err != nil {
		errs = append(errs, err)
	}
	cp.allowed = allowed
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

// allows reports whether images of repo may be used (and its registry contacted).
func (cp *compiledPolicy) allows(repo name.Repository) bool { return cp.allowed.Allows(repo) }
