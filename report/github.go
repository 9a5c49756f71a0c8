package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/catalogbot/catalogbot/diag"
)

// MaxAnnotations is how many workflow-command annotations of each level GitHub shows per step; the rest
// are summarised in one notice so nothing is silently dropped.
const MaxAnnotations = 10

// WriteGitHub renders diagnostics as GitHub Actions workflow commands (::error file=...,line=...::msg),
// with paths joined to root (the catalog directory relative to the repository).
func WriteGitHub(w io.Writer, r *Report, root string) error {
	var b strings.Builder
	counts := map[diag.Severity]int{}
	dropped := 0
	for _, d := range r.Diagnostics() {
		counts[d.Severity]++
		if counts[d.Severity] > MaxAnnotations {
			dropped++
			continue
		}
		level := map[diag.Severity]string{diag.Error: "error", diag.Warning: "warning"}[d.Severity]
		if level == "" {
			level = "notice"
		}
		var props []string
		if d.File != "" {
			props = append(props, "file="+escapeProperty(joinRoot(root, d.File)))
			if d.Line > 0 {
				props = append(props, fmt.Sprintf("line=%d", d.Line))
			}
			if d.Column > 0 {
				props = append(props, fmt.Sprintf("col=%d", d.Column))
			}
		}
		props = append(props, "title="+escapeProperty(RuleID(d)))
		fmt.Fprintf(&b, "::%s %s::%s\n", level, strings.Join(props, ","), escapeData(messageWithHint(d)))
	}
	for _, s := range r.Stages {
		dropped += diag.TruncatedCount(s.Truncated, "")
	}
	if dropped > 0 {
		fmt.Fprintf(&b, "::notice title=catalogbot::%s\n", escapeData(fmt.Sprintf("%d more diagnostics are not annotated; see the step log or the JSON/SARIF output", dropped)))
	}
	for _, s := range r.Stages {
		if s.Err != "" {
			fmt.Fprintf(&b, "::error title=%s::%s\n", escapeProperty("catalogbot "+s.Name), escapeData(s.Err))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// escapeData and escapeProperty follow the workflow-command encoding of actions/toolkit.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
