// Package diag holds the diagnostic and error-category types shared by every check, the pipeline and the
// front-ends. It is a leaf package: it imports nothing of this module.
package diag

import (
	"cmp"
	"fmt"
	"slices"
)

// Severity of a diagnostic. Only errors fail a catalog; warnings and notes are advice.
type Severity string

const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Note    Severity = "note"
)

// Diagnostic is one finding, located as precisely as the check can: a file and line when it comes from a
// catalog file, and the package/channel/bundle it is about.
type Diagnostic struct {
	Severity Severity `json:"severity"`
	// Check is the stage that produced it ("validate", "owners", "images", "render", ...).
	Check string `json:"check"`
	// Rule is a stable identifier of the rule inside the check (e.g. "channel-multiple-heads").
	Rule    string `json:"rule,omitempty"`
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Package string `json:"package,omitempty"`
	Channel string `json:"channel,omitempty"`
	Bundle  string `json:"bundle,omitempty"`
	Message string `json:"message"`
	// Hint says what to do about it.
	Hint string `json:"hint,omitempty"`
}

// Location renders "file:line:col" with the parts that are known ("" when no file is known).
func (d Diagnostic) Location() string {
	switch {
	case d.File == "":
		return ""
	case d.Line == 0:
		return d.File
	case d.Column == 0:
		return fmt.Sprintf("%s:%d", d.File, d.Line)
	default:
		return fmt.Sprintf("%s:%d:%d", d.File, d.Line, d.Column)
	}
}

func (d Diagnostic) String() string {
	s := string(d.Severity) + ": " + d.Message
	if loc := d.Location(); loc != "" {
		s = loc + ": " + s
	}
	if d.Rule != "" {
		s += " [" + d.Rule + "]"
	}
	return s
}

// Compare orders diagnostics deterministically: by file, line, column, then package, channel, bundle,
// rule and message. Diagnostics without a file sort after those with one.
func Compare(a, b Diagnostic) int {
	if (a.File == "") != (b.File == "") {
		if a.File == "" {
			return 1
		}
		return -1
	}
	return cmp.Or(
		cmp.Compare(a.File, b.File),
		cmp.Compare(a.Line, b.Line),
		cmp.Compare(a.Column, b.Column),
		cmp.Compare(a.Package, b.Package),
		cmp.Compare(a.Channel, b.Channel),
		cmp.Compare(a.Bundle, b.Bundle),
		cmp.Compare(a.Check, b.Check),
		cmp.Compare(a.Rule, b.Rule),
		cmp.Compare(a.Message, b.Message),
	)
}

// Sort sorts diagnostics in place with Compare and drops exact duplicates.
func Sort(ds []Diagnostic) []Diagnostic {
	slices.SortFunc(ds, Compare)
	return slices.Compact(ds)
}

// HasErrors reports whether any diagnostic has severity Error.
func HasErrors(ds []Diagnostic) bool {
	return slices.ContainsFunc(ds, func(d Diagnostic) bool { return d.Severity == Error })
}
