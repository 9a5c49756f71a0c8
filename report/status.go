package report

import "github.com/catalogbot/catalogbot/diag"

// rank orders statuses for Verdict. A real problem in the change (Fail) outranks an infrastructure failure
// (Error): an outage does not excuse a broken change, and the author has something to fix either way; a
// configuration or usage problem (ActionRequired) outranks both, since nothing can be judged until it is
// fixed.
var rank = map[Status]int{Skipped: 0, Pass: 1, Error: 2, Fail: 3, ActionRequired: 4}

// Worse returns the worse of two statuses in Verdict's order.
func Worse(a, b Status) Status {
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// CategoryStatus is the one mapping from an error's category to a status: Usage is ActionRequired, Invalid
// is Fail, Infra and Internal are Error.
func CategoryStatus(c diag.Category) Status {
	switch c {
	case diag.Usage:
		return ActionRequired
	case diag.Invalid:
		return Fail
	default:
		return Error
	}
}

// StatusOf is the one status of a stage (or of a run) that found ds and, when err is not nil, could not
// finish because of err: Fail when some error diagnostic is about the change itself (diagnostics that
// only report an infrastructure failure, diag.Diagnostic.IsInfra, do not count), worsened by err's
// category (CategoryStatus) in Verdict's order. So a change with real problems fails even when a registry
// was also down, and an outage alone is an Error.
func StatusOf(ds []diag.Diagnostic, err error) Status {
	s := Pass
	for _, d := range ds {
		if d.Severity == diag.Error && !d.IsInfra() {
			s = Fail
			break
		}
	}
	if err != nil {
		s = Worse(s, CategoryStatus(diag.CategoryOf(err)))
	}
	return s
}

// ExitCode is catalogbot's one exit-code map: 0 pass (or skipped), 1 fail (the change is wrong: the
// author's to fix), 2 action required (usage or repository configuration), 3 error (infrastructure or
// internal: not a problem with the catalog, retry).
func (s Status) ExitCode() int {
	switch s {
	case Fail:
		return 1
	case ActionRequired:
		return 2
	case Error:
		return 3
	default:
		return 0
	}
}

// ExitCodeOf is the exit code of a run that ended with err (0 for nil).
func ExitCodeOf(err error) int {
	if err == nil {
		return 0
	}
	return CategoryStatus(diag.CategoryOf(err)).ExitCode()
}
