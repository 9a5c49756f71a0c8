package images

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/catalogbot/catalogbot/diag"
)

// CheckName is the diag.Diagnostic Check of every diagnostic this package produces.
const CheckName = "images"

// Rules of the images check.
const (
	RuleMissing            = "image-missing"
	RuleUnauthorized       = "image-unauthorized"
	RuleBadReference       = "image-bad-reference"
	RuleNotDigestPinned    = "image-not-digest-pinned"
	RuleRegistryNotAllowed = "image-registry-not-allowed"
	RulePlatformMissing    = "image-platform-missing"
	RuleUnavailable        = diag.RuleRegistryUnavailable
	// RuleCheckFailed is a registry failure that has no known classification.
	RuleCheckFailed = diag.RuleCheckFailed
)

// Category says whose fault a diagnostic of this check is: the registry's (diag.Infra) for
// registry-unavailable and image-check-failed, the catalog's (diag.Invalid) for every other rule.
func Category(d diag.Diagnostic) diag.Category {
	if d.IsInfra() {
		return diag.Infra
	}
	return diag.Invalid
}

// outcome is the result of checking one unique reference.
type outcome struct {
	kind   kind
	reason string // short and stable: a registry error code, an HTTP status or a network failure class
	detail string // the error text, for unclassified failures only
	// missing and have are the required platforms the image lacks and those it has.
	missing, have []string
}

func outcomeOf(err error) outcome {
	if err == nil {
		return outcome{kind: kindOK}
	}
	k, reason := classify(err)
	if k == kindUnknown {
		return outcome{kind: k, reason: reason, detail: err.Error()}
	}
	return outcome{kind: k, reason: reason}
}

// diagnostic is the diagnostic for one use of the reference, if the outcome is a failure.
func (o outcome) diagnostic(u Ref, ref name.Reference) (diag.Diagnostic, bool) {
	reg := ref.Context().RegistryStr()
	switch o.kind {
	case kindMissing:
		return newDiag(u, RuleMissing, fmt.Sprintf("image %s (%s) does not exist in registry %s: %s", u.Image, u.Field, reg, o.reason),
			"push the image, or correct the reference"), true
	case kindUnauthorized:
		return newDiag(u, RuleUnauthorized, fmt.Sprintf("image %s (%s): registry %s refused access: %s", u.Image, u.Field, reg, o.reason),
			"if the image is private, give catalogbot pull credentials in its docker config ($DOCKER_CONFIG/config.json or ~/.docker/config.json, e.g. with `docker login "+reg+"`); otherwise make the repository public or correct the reference"), true
	case kindBadReference:
		return newDiag(u, RuleBadReference, fmt.Sprintf("registry %s rejected image reference %s (%s): %s", reg, u.Image, u.Field, o.reason),
			"correct the repository name or tag"), true
	case kindPlatformMissing:
		have := "none"
		if len(o.have) > 0 {
			have = strings.Join(o.have, ", ")
		}
		return newDiag(u, RulePlatformMissing, fmt.Sprintf("image %s (%s) lacks required platform %s (has %s)", u.Image, u.Field, strings.Join(o.missing, ", "), have),
			"publish a multi-platform image (an index) that includes the required platforms"), true
	case kindUnavailable:
		d := newDiag(u, RuleUnavailable, fmt.Sprintf("cannot verify image %s (%s): registry %s is unavailable: %s", u.Image, u.Field, reg, o.reason),
			"not a problem with the catalog: retry when the registry is back")
		return d, true
	case kindUnknown:
		return newDiag(u, RuleCheckFailed, fmt.Sprintf("cannot verify image %s (%s): %s", u.Image, u.Field, o.detail),
			"retry; if it persists, check the registry"), true
	}
	return diag.Diagnostic{}, false
}

func newDiag(u Ref, rule, msg, hint string) diag.Diagnostic {
	return diag.Diagnostic{
		Severity: diag.Error, Check: CheckName, Rule: rule,
		File: u.File, Line: u.Line, Package: u.Package, Bundle: u.Bundle,
		Message: msg, Hint: hint,
	}
}

// infraError summarizes, per registry, the images that could not be verified; nil when there are none.
func infraError(targets []*target) error {
	type hostFailure struct {
		reason string
		images int
	}
	byHost := map[string]*hostFailure{}
	var hosts []string
	for _, t := range targets {
		if t.out.kind != kindUnavailable && t.out.kind != kindUnknown {
			continue
		}
		host := t.ref.Context().RegistryStr()
		f := byHost[host]
		if f == nil {
			f = &hostFailure{reason: t.out.reason}
			if t.out.kind == kindUnknown {
				f.reason = t.out.detail
			}
			byHost[host] = f
			hosts = append(hosts, host)
		}
		f.images++
	}
	if len(hosts) == 0 {
		return nil
	}
	slices.Sort(hosts)
	errs := make([]error, 0, len(hosts))
	for _, h := range hosts {
		errs = append(errs, fmt.Errorf("registry %s: %d image(s) not verified: %s", h, byHost[h].images, byHost[h].reason))
	}
	return diag.InfraError(fmt.Errorf("checking images: %w", errors.Join(errs...)))
}
