package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// TextOptions tune the text renderer.
type TextOptions struct {
	// Color uses ANSI colours (set it when writing to a terminal).
	Color bool
	// MaxPerStage caps diagnostics printed per stage (0 = all); the rest are counted.
	MaxPerStage int
	// MaxBytes caps the diagnostics' part of the output (MaxText when 0): once it is reached, the rest
	// are counted, not printed.
	MaxBytes int
}

// MaxText is the default cap of the text report's diagnostics: a terminal, a CI log or a pre-commit run
// has no use for more, and a hostile catalog must not turn into hundreds of megabytes of log.
const MaxText = 1 << 20

var statusMark = map[Status]string{Pass: "PASS", Fail: "FAIL", ActionRequired: "ACTION REQUIRED", Error: "ERROR", Skipped: "SKIP"}

// WriteText renders the report for people: one block per stage, diagnostics as file:line:col lines.
func WriteText(w io.Writer, r *Report, o TextOptions) error {
	color := func(code, s string) string {
		if !o.Color {
			return s
		}
		return "\x1b[" + code + "m" + s + "\x1b[0m"
	}
	codes := map[Status]string{Pass: "32", Fail: "31", ActionRequired: "33", Error: "35", Skipped: "90"}
	maxBytes := o.MaxBytes
	if maxBytes <= 0 {
		maxBytes = MaxText
	}
	var b strings.Builder
	full := false // the byte cap was reached: diagnostics are only counted from then on
	if r.Title != "" {
		fmt.Fprintf(&b, "%s\n", r.Title)
	}
	for _, s := range r.Stages {
		line := fmt.Sprintf("%-15s %s", color(codes[s.Status], statusMark[s.Status]), s.Name)
		if s.Duration > 0 {
			line += fmt.Sprintf(" (%s)", s.Duration.Round(time.Millisecond))
		}
		if s.Summary != "" {
			line += ": " + s.Summary
		}
		b.WriteString(line + "\n")
		if s.Err != "" {
			fmt.Fprintf(&b, "    %s\n", oneLine(s.Err))
		}
		for i, d := range s.Diagnostics {
			if o.MaxPerStage > 0 && i == o.MaxPerStage {
				fmt.Fprintf(&b, "    ... and %d more\n", len(s.Diagnostics)-i)
				break
			}
			entry := "    " + oneLine(d.String()) + "\n"
			if d.Hint != "" {
				entry += "        hint: " + oneLine(d.Hint) + "\n"
			}
			if full = full || b.Len()+len(entry) > maxBytes; full {
				fmt.Fprintf(&b, "    ... and %s more not shown: the text report stops at %d bytes (the JSON and SARIF reports list them)\n",
					Count(len(s.Diagnostics)-i), maxBytes)
				break
			}
			b.WriteString(entry)
		}
		for _, t := range s.Truncated {
			fmt.Fprintf(&b, "    ... and %s more [%s] (only the first of each rule are kept; see limits.maxDiagnosticsPerRule)\n", Count(t.Count), t.Rule)
		}
	}
	for _, k := range sortedKeys(r.Outputs) {
		fmt.Fprintf(&b, "%s: %s\n", k, r.Outputs[k])
	}
	fmt.Fprintf(&b, "verdict: %s\n", color(codes[r.Verdict()], string(r.Verdict())))
	_, err := io.WriteString(w, b.String())
	return err
}

// oneLine keeps text from catalogs on its own report lines: continuation lines of a multi-line message
// (a drift diff) are indented under it, and carriage returns cannot rewrite what was printed. In the
// github format the whole text is also inside a ::stop-commands:: guard.
func oneLine(s string) string {
	s = strings.NewReplacer("\r\n", "\n", "\r", "\\r").Replace(s)
	return strings.ReplaceAll(s, "\n", "\n        ")
}

// Count writes n with thousands separators (699,990).
func Count(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}
