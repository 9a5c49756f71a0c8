package policy

import (
	"testing"

	"github.com/catalogbot/catalogbot/diag"
)

// A finding is pre-existing when the base has the same one, wherever its line moved; a repetition the
// change adds, a finding on another bundle with the same words, or one of another severity is the
// change's; notes are never pre-existing.
func TestBaseline(t *testing.T) {
	f := func(bundle string, line int, sev diag.Severity) diag.Diagnostic {
		return diag.Diagnostic{Severity: sev, Check: Check, Rule: ruleReplacesMissing, File: "p/catalog.yaml", Line: line, Package: "p", Bundle: bundle, Message: "replaces x, not in the catalog"}
	}
	base := []diag.Diagnostic{f("a", 10, diag.Error), f("b", 20, diag.Warning), {Severity: diag.Note, Check: Check, Rule: ruleRemovedAPI, Message: "did not run"}}
	head := []diag.Diagnostic{f("a", 14, diag.Error), f("a", 15, diag.Error), f("c", 30, diag.Error), f("b", 24, diag.Error),
		{Severity: diag.Note, Check: Check, Rule: ruleRemovedAPI, Message: "did not run"}}
	added, existing := Baseline(head, base)
	if len(existing) != 1 || existing[0].Line != 14 {
		t.Fatalf("pre-existing: %v", existing)
	}
	if len(added) != 4 {
		t.Fatalf("added: %v", added)
	}
	notes := AsPreExisting(existing, "main")
	if notes[0].Severity != diag.Note || notes[0].Message != "pre-existing (already on main, error): replaces x, not in the catalog" {
		t.Fatalf("as pre-existing: %v", notes)
	}
}
