package diag

import "errors"

// Category says whose fault an error is; report.CategoryStatus maps it to a status, which decides exit
// codes and check-run conclusions.
type Category int

const (
	// Internal is a bug in catalogbot or an unclassified failure (exit 3).
	Internal Category = iota
	// Invalid means the user's catalog is wrong (exit 1, check run "failure").
	Invalid
	// Usage means the command line or the repository's configuration is wrong (exit 2, "action_required").
	Usage
	// Infra means a registry, GitHub or cluster failed: not the user's catalog (exit 3, says what to do).
	Infra
)

func (c Category) String() string {
	switch c {
	case Invalid:
		return "invalid"
	case Usage:
		return "usage"
	case Infra:
		return "infrastructure"
	default:
		return "internal"
	}
}

// severity orders categories as the verdict orders statuses (report.Worse): the command line or the
// configuration first (nothing can be judged until it is fixed), then a problem of the catalog (the
// author has something to fix, outage or not), then a bug, then the infrastructure.
var severity = map[Category]int{Infra: 0, Internal: 1, Invalid: 2, Usage: 3}

// Worse returns the category that decides the outcome of a run that failed with both a and b.
func Worse(a, b Category) Category {
	if severity[b] > severity[a] {
		return b
	}
	return a
}

type categorized struct {
	cat Category
	err error
}

func (e *categorized) Error() string { return e.err.Error() }
func (e *categorized) Unwrap() error { return e.err }

// WithCategory marks err with a category; nil stays nil. The message is unchanged.
func WithCategory(c Category, err error) error {
	if err == nil {
		return nil
	}
	return &categorized{cat: c, err: err}
}

// UsageError, InvalidError and InfraError are shorthands for WithCategory.
func UsageError(err error) error   { return WithCategory(Usage, err) }
func InvalidError(err error) error { return WithCategory(Invalid, err) }
func InfraError(err error) error   { return WithCategory(Infra, err) }

// CategoryOf returns the outermost category marked on err's chain, or Internal.
func CategoryOf(err error) Category {
	var c *categorized
	if errors.As(err, &c) {
		return c.cat
	}
	return Internal
}

// Rules of diagnostics that report an infrastructure failure rather than a problem of the catalog: a
// registry that could not answer. Checks that can fail this way (images, render) use these rule names.
const (
	RuleRegistryUnavailable = "registry-unavailable"
	RuleCheckFailed         = "image-check-failed"
)

// IsInfra reports whether d is about an infrastructure failure (a registry that could not answer) rather
// than about the catalog: such a diagnostic never makes a change fail on its own.
func (d Diagnostic) IsInfra() bool {
	return d.Rule == RuleRegistryUnavailable || d.Rule == RuleCheckFailed
}
