package report

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"
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
		fmt.Fprintf(&head, "| %s | %s %s | %s | %s |\n", cell(Text(s.Name)), statusIcon[s.Status], s.Status, s.Duration.Round(time.Millisecond), cell(Text(sum)))
	}
	for _, k := range sortedKeys(r.Outputs) {
		fmt.Fprintf(&head, "\n**%s**: %s\n", k, CodeSpan(r.Outputs[k])) // keys are the pipeline's own names
	}
	var tail []string
	for _, s := range r.Stages {
		if len(s.Diagnostics) == 0 && len(s.Truncated) == 0 && s.Details == "" {
			continue
		}
		tail = append(tail, fmt.Sprintf("\n### %s\n", Text(s.Name)))
		for _, d := range s.Diagnostics {
			line := "- "
			if loc := d.Location(); loc != "" {
				line += CodeSpan(loc) + " "
			}
			msg, more, multi := strings.Cut(d.Message, "\n")
			line += "**" + Text(string(d.Severity)) + "** " + Text(msg)
			if d.Rule != "" {
				line += " (" + CodeSpan(d.Rule) + ")"
			}
			if d.Hint != "" {
				line += "<br>↳ " + Text(d.Hint)
			}
			if multi {
				// the rest of a multi-line message (a unified diff) as a fenced block
				lang := ""
				if strings.HasPrefix(more, "--- ") {
					lang = "diff"
				}
				line += "\n\n  ```" + lang + "\n" + indentBlock(strings.ReplaceAll(more, "```", "` ` `")) + "\n  ```\n"
			}
			tail = append(tail, line+"\n")
		}
		for _, t := range s.Truncated {
			tail = append(tail, fmt.Sprintf("- … and %s more (%s): only the first of each rule are kept\n", Count(t.Count), CodeSpan(t.Rule)))
		}
		if s.Details != "" {
			tail = append(tail, "\n"+s.Details+"\n")
		}
	}
	// Lines of the table count as items too, so even a table longer than the limit is cut at a line.
	items := strings.SplitAfter(head.String(), "\n")
	items = append(items[:len(items)-1], tail...) // the last is "": the head ends with a newline
	full := strings.Join(items, "")
	if len(full) <= limit {
		return full
	}
	kept := 0 // full[:kept] is the items that fit so far
	for i, t := range items {
		note := fmt.Sprintf("\n_…%d more lines truncated to fit GitHub's %d-character limit; see the JSON report._\n", len(items)-i, limit)
		if kept+len(t)+len(note) > limit {
			return clip(full[:kept]+note, limit)
		}
		kept += len(t)
	}
	return full
}

// clip cuts s to at most n bytes at a rune boundary (only for limits too small for the note).
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// WriteMarkdown writes Markdown(r, limit).
func WriteMarkdown(w io.Writer, r *Report, limit int) error {
	_, err := io.WriteString(w, Markdown(r, limit))
	return err
}

// cell escapes what ends a table cell: a pipe (Text escapes it already; a CodeSpan's is escaped here,
// which GitHub's tables undo inside code spans too) and a line break.
func cell(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == '|':
			b.WriteString(`\|`)
			i++
		case s[i] == '|':
			b.WriteString(`\|`)
		case s[i] == '\n':
			b.WriteByte(' ')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func indentBlock(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}
