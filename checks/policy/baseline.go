package policy

import (
	"fmt"

	"github.com/catalogbot/catalogbot/diag"
)

// Baseline splits what the rules found on a change's result (head) into what the change adds and what
// its base already had (base: the same rules on the same packages at the base), as golangci-lint's
// new-from-rev does: a finding is pre-existing when the base has one of the same severity, rule,
// package, channel, bundle and message (not position: lines move). Counts matter: a change that repeats
// a base finding adds the repetition. Notes (a rule that could not run) are never pre-existing.
func Baseline(head, base []diag.Diagnostic) (added, existing []diag.Diagnostic) {
	have := map[string]int{}
	for _, d := range base {
		if d.Severity != diag.Note {
			have[baselineKey(d)]++
		}
	}
	for _, d := range head {
		k := baselineKey(d)
		if d.Severity != diag.Note && have[k] > 0 {
			have[k]--
			existing = append(existing, d)
			continue
		}
		added = append(added, d)
	}
	return added, existing
}

func baselineKey(d diag.Diagnostic) string {
	return fmt.Sprintf("%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s", d.Severity, d.Check, d.Rule, d.Package, d.Channel, d.Bundle, d.Message)
}

// AsPreExisting turns findings Baseline found on the base into notes that say so, for a report that
// lists them (validate --since): they no longer decide the verdict.
func AsPreExisting(ds []diag.Diagnostic, base string) []diag.Diagnostic {
	out := make([]diag.Diagnostic, len(ds))
	for i, d := range ds {
		d.Message = fmt.Sprintf("pre-existing (already on %s, %s): %s", base, d.Severity, d.Message)
		d.Severity = diag.Note
		out[i] = d
	}
	return out
}
