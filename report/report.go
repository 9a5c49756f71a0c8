// Package report is the one result type of every catalogbot run, and its renderers (text, JSON, SARIF,
// GitHub workflow annotations, markdown for step summaries, PR comments and check runs).
package report

import (
	"time"

	"github.com/catalogbot/catalogbot/diag"
)

// Status of a stage or of a whole report.
type Status string

const (
	// Pass: the stage ran and found nothing wrong (warnings allowed).
	Pass Status = "pass"
	// Fail: the stage found errors in the change (the user's to fix).
	Fail Status = "fail"
	// ActionRequired: the repository configuration or the command line is wrong.
	ActionRequired Status = "action_required"
	// Error: the stage could not run (registry, GitHub or cluster down, or a bug): not the user's catalog.
	Error Status = "error"
	// Skipped: the stage did not run (disabled, or nothing it covers changed); Summary says why.
	Skipped Status = "skipped"
)

// Stage is the result of one pipeline stage.
type Stage struct {
	Name        string            `json:"name"`
	Status      Status            `json:"status"`
	Duration    time.Duration     `json:"duration_ns"`
	Diagnostics []diag.Diagnostic `json:"diagnostics,omitempty"`
	// Truncated counts, per rule, the diagnostics the stage found beyond its limit (not in Diagnostics).
	Truncated []diag.Truncation `json:"truncated,omitempty"`
	// Summary is a short human line ("validated 279 packages, 5374 bundles"); Details is optional markdown
	// (graph diffs with mermaid diagrams, smoke results) for the markdown renderers.
	Summary string `json:"summary,omitempty"`
	Details string `json:"details,omitempty"`
	// Graphs are the upgrade graphs the details show as mermaid blocks, in their order: the run page
	// draws them from here (the details are output only, never read back).
	Graphs []UpgradeGraph `json:"graphs,omitempty"`
	// Err is the stage's failure when Status is Error or ActionRequired.
	Err string `json:"error,omitempty"`
}

// Report is the result of a catalogbot run: one per validate, pr, or bot job.
type Report struct {
	// Title names what was checked ("catalog ./catalog", "pull request owner/repo#12 at abc123").
	Title  string  `json:"title"`
	Stages []Stage `json:"stages"`
	// Outputs are machine-readable results (e.g. "catalog_digest").
	Outputs map[string]string `json:"outputs,omitempty"`
}

// Verdict is the report's overall status: the worst stage status, in the order ActionRequired > Fail >
// Error > Pass (see rank); a report whose stages were all skipped passes. A change with real problems
// fails even when a registry or cluster was also down: its Error stages are still listed as such.
func (r *Report) Verdict() Status {
	v := Pass
	for _, s := range r.Stages {
		v = Worse(v, s.Status)
	}
	return v
}

// ExitCode is the verdict's exit code (Status.ExitCode).
func (r *Report) ExitCode() int { return r.Verdict().ExitCode() }

// Diagnostics returns every stage's diagnostics, sorted.
func (r *Report) Diagnostics() []diag.Diagnostic {
	var all []diag.Diagnostic
	for _, s := range r.Stages {
		all = append(all, s.Diagnostics...)
	}
	return diag.Sort(all)
}
