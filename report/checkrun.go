package report

import (
	"fmt"
	"strings"

	"github.com/catalogbot/catalogbot/diag"
)

// CheckRunOutput is a report rendered as a GitHub check run: what the bot sends, free of any GitHub client.
type CheckRunOutput struct {
	Title, Summary string
	// Conclusion is the check run conclusion of the verdict (CheckConclusion).
	Conclusion  string
	Annotations []Annotation
	// Dropped counts the located diagnostics beyond the annotation limit (the summary says so).
	Dropped int
}

// Annotation is one check run annotation: a located diagnostic.
type Annotation struct {
	Path               string
	StartLine, EndLine int
	// Level is GitHub's annotation level: failure, warning or notice.
	Level string
	// Title is the diagnostic's rule (RuleID), the same name SARIF and workflow commands use.
	Title, Message string
}

// CheckRun renders r as a check run with at most maxAnnotations annotations; the summary is the Markdown
// report, within GitHub's limit.
func CheckRun(r *Report, maxAnnotations int) CheckRunOutput {
	out := CheckRunOutput{Title: CheckTitle(r), Conclusion: CheckConclusion(r.Verdict())}
	out.Annotations, out.Dropped = checkAnnotations(r, maxAnnotations)
	out.Summary = Markdown(r, MaxMarkdown-200)
	if out.Dropped > 0 {
		out.Summary += fmt.Sprintf("\n_%d more annotations not shown; every diagnostic is listed above and on the details page._\n", out.Dropped)
	}
	return out
}

// RuleID names a diagnostic's rule in every output that names one (SARIF ruleId, workflow command and
// check run annotation titles): "check/rule", or the check alone.
func RuleID(d diag.Diagnostic) string {
	if d.Rule == "" {
		return d.Check
	}
	return d.Check + "/" + d.Rule
}

// CheckConclusion maps a verdict to a check run conclusion. An infrastructure error is a failure (a neutral
// conclusion would satisfy branch protection), titled as not the author's fault (CheckTitle).
func CheckConclusion(v Status) string {
	switch v {
	case Pass:
		return "success"
	case ActionRequired:
		return "action_required"
	default:
		return "failure"
	}
}

// CheckTitle is a check run's one-line title.
func CheckTitle(r *Report) string {
	v := r.Verdict()
	names := stagesWith(r, v)
	errs := 0
	for _, d := range r.Diagnostics() {
		if d.Severity == diag.Error && !d.IsInfra() {
			errs++
		}
	}
	switch v {
	case Pass:
		return "All stages passed"
	case Fail:
		title := fmt.Sprintf("Failed: %s (%s)", strings.Join(names, ", "), countOf(errs, "error"))
		if infra := stagesWith(r, Error); len(infra) > 0 {
			// a broken change outranks an outage, which is still named (Verdict)
			title += "; infrastructure failure in " + strings.Join(infra, ", ")
		}
		return title
	case ActionRequired:
		return "Configuration problem: " + strings.Join(names, ", ")
	default:
		return "Infrastructure failure in " + strings.Join(names, ", ") + ": not your change; comment /retest"
	}
}

// stagesWith names the stages of r with status s.
func stagesWith(r *Report, s Status) []string {
	var names []string
	for _, st := range r.Stages {
		if st.Status == s {
			names = append(names, st.Name)
		}
	}
	return names
}

func countOf(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// checkAnnotations turns located diagnostics into annotations, at most limit of them.
func checkAnnotations(r *Report, limit int) (out []Annotation, dropped int) {
	for _, d := range r.Diagnostics() {
		if d.File == "" {
			continue
		}
		if len(out) >= limit {
			dropped++
			continue
		}
		level := map[diag.Severity]string{diag.Error: "failure", diag.Warning: "warning"}[d.Severity]
		if level == "" {
			level = "notice"
		}
		line := max(d.Line, 1)
		msg := d.Message
		if d.Hint != "" {
			msg += "\n" + d.Hint
		}
		out = append(out, Annotation{Path: d.File, StartLine: line, EndLine: line, Level: level, Title: RuleID(d), Message: msg})
	}
	return out, dropped
}
