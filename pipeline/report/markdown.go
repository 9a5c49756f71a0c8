package report

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// MaxMarkdown is GitHub's limit for a check run summary, a step summary and an issue comment body.
const MaxMarkdown = 65535

var statusIcon = map[Status]string{Pass: "✅", Fail: "❌", ActionRequired: "⚠️", Error: "🔥", Skipped: "⏭️"}

// Markdown renders the report for a step summary, PR comment or check run, truncated deterministically
// to limit bytes (MaxMarkdown when 0): whole diagnostic lines are dropped from the end and counted.
func Markdown(r *Report, limit int) string {
	if limit <= 0 {
		limit = MaxMarkdown
	}
	var head strings.Builder
	fmt.Fprintf(&head, "## %s catalogbot: %s\n\n", statusIcon[r.Verdict()], r.Verdict())
	if r.Title != "" {
		fmt.Fprintf(&head, "%s\n\n", r.Title)
	}
	head.WriteString("| stage | result | time | summary |\n|---|---|---|---|\n")
	for _, s := range r.Stages {
		sum := s.Summary
		if s.Err != "" {
			sum = strings.TrimSpace(sum + " " + s.Err)
		}
		fmt.Fprintf(&head, "| %s | %s %s | %s | %s |\n", s.Name, statusIcon[s.Status], s.Status, s.Duration.Round(time.Millisecond), cell(sum))
	}
	for _, k := range sortedKeys(r.Outputs) {
		fmt.Fprintf(&head, "\n**%s**: `%s`\n", k, r.Outputs[k])
	}
	var tail []string
	for _, s := range r.Stages {
		if len(s.Diagnostics) == 0 && s.Details == "" {
			continue
		}
		tail = append(tail, fmt.Sprintf("\n### %s\n", s.Name))
		for _, d := range s.Diagnostics {
			line := "- "
			if loc := d.Location(); loc != "" {
				line += "`" + loc + "` "
			}
			line += "**" + string(d.Severity) + "** " + mdEscape(d.Message)
			if d.Rule != "" {
				line += " (`" + d.Rule + "`)"
			}
			if d.Hint != "" {
				line += "<br>↳ " + mdEscape(d.Hint)
			}
			tail = append(tail, line+"\n")
		}
		if s.Details != "" {
			tail = append(tail, "\n"+s.Details+"\n")
		}
	}
	out := head.String()
	for i, t := range tail {
		note := fmt.Sprintf("\n_…%d more lines truncated to fit GitHub's %d-character limit; see the JSON report._\n", len(tail)-i, limit)
		if len(out)+len(t)+len(note) > limit {
			return out + note
		}
		out += t
	}
	return out
}

// WriteMarkdown writes Markdown(r, limit).
func WriteMarkdown(w io.Writer, r *Report, limit int) error {
	_, err := io.WriteString(w, Markdown(r, limit))
	return err
}

func cell(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ").Replace(s)
}

func mdEscape(s string) string {
	return strings.NewReplacer("<", "&lt;", ">", "&gt;", "\n", " ").Replace(s)
}
