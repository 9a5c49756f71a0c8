package report_test

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	goldenpkg "github.com/catalogbot/catalogbot/internal/golden"
	"github.com/catalogbot/catalogbot/report"
)

func render(t *testing.T, write func(*bytes.Buffer) error) string {
	t.Helper()
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestGoldens(t *testing.T) {
	r := sample()
	for _, tc := range []struct {
		file  string
		write func(*bytes.Buffer) error
	}{
		{"text.txt", func(b *bytes.Buffer) error { return report.WriteText(b, r, report.TextOptions{}) }},
		{"text-color.txt", func(b *bytes.Buffer) error { return report.WriteText(b, r, report.TextOptions{Color: true}) }},
		{"text-max1.txt", func(b *bytes.Buffer) error { return report.WriteText(b, r, report.TextOptions{MaxPerStage: 1}) }},
		{"report.json", func(b *bytes.Buffer) error { return report.WriteJSON(b, r) }},
		{"report.sarif", func(b *bytes.Buffer) error { return report.WriteSARIF(b, r, "v1.2.3", "") }},
		{"report-root.sarif", func(b *bytes.Buffer) error { return report.WriteSARIF(b, r, "v1.2.3", "operators") }},
		{"github.txt", func(b *bytes.Buffer) error { return report.WriteGitHub(b, r, "") }},
		{"github-root.txt", func(b *bytes.Buffer) error { return report.WriteGitHub(b, r, "operators") }},
		{"report.md", func(b *bytes.Buffer) error { return report.WriteMarkdown(b, r, 0) }},
		{"report-1000.md", func(b *bytes.Buffer) error { return report.WriteMarkdown(b, r, 1000) }},
		{"empty.txt", func(b *bytes.Buffer) error { return report.WriteText(b, &report.Report{}, report.TextOptions{}) }},
		{"empty.sarif", func(b *bytes.Buffer) error { return report.WriteSARIF(b, &report.Report{}, "", "") }},
		{"empty.md", func(b *bytes.Buffer) error { return report.WriteMarkdown(b, &report.Report{}, 0) }},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got := render(t, tc.write)
			golden(t, tc.file, got)
			if again := render(t, tc.write); again != got {
				t.Errorf("a second rendering differs")
			}
		})
	}
}

// TestRendererDoesNotMutate: rendering (which sorts diagnostics) leaves the report as it was.
func TestRendererDoesNotMutate(t *testing.T) {
	r := sample()
	before := render(t, func(b *bytes.Buffer) error { return report.WriteJSON(b, r) })
	for _, f := range report.Formats {
		render(t, func(b *bytes.Buffer) error { return report.Render(b, r, f, "operators", "v1", true) })
	}
	if after := render(t, func(b *bytes.Buffer) error { return report.WriteJSON(b, r) }); after != before {
		t.Errorf("rendering changed the report:\n%s", goldenpkg.FirstDiff(before, after))
	}
}

func TestRender(t *testing.T) {
	r := sample()
	for _, tc := range []struct {
		format string
		want   func(*bytes.Buffer) error
	}{
		{"", func(b *bytes.Buffer) error { return report.WriteText(b, r, report.TextOptions{}) }},
		{"text", func(b *bytes.Buffer) error { return report.WriteText(b, r, report.TextOptions{}) }},
		{"json", func(b *bytes.Buffer) error { return report.WriteJSON(b, r) }},
		{"sarif", func(b *bytes.Buffer) error { return report.WriteSARIF(b, r, "v9", "operators") }},
		{"github", func(b *bytes.Buffer) error {
			if err := report.WriteGitHub(b, r, "operators"); err != nil {
				return err
			}
			return report.WriteText(b, r, report.TextOptions{})
		}},
		{"markdown", func(b *bytes.Buffer) error { return report.WriteMarkdown(b, r, 0) }},
	} {
		got := stripCommandGuard(render(t, func(b *bytes.Buffer) error { return report.Render(b, r, tc.format, "operators", "v9", false) }))
		if want := render(t, tc.want); got != want {
			t.Errorf("Render(%q) differs from its writer:\n%s", tc.format, goldenpkg.FirstDiff(want, got))
		}
	}
	for _, f := range report.Formats {
		if f == "" {
			t.Errorf("Formats lists an empty name")
		}
		if err := report.Render(&bytes.Buffer{}, r, f, "", "", false); err != nil {
			t.Errorf("Render(%q): %v", f, err)
		}
	}
}

func TestRenderUnknownFormat(t *testing.T) {
	for _, f := range []string{"xml", "TEXT", "sarif ", "md"} {
		var buf bytes.Buffer
		err := report.Render(&buf, sample(), f, "", "", false)
		if err == nil {
			t.Errorf("Render(%q) succeeded, want an error", f)
			continue
		}
		if !strings.Contains(err.Error(), strconv.Quote(f)) || !strings.Contains(err.Error(), "markdown") {
			t.Errorf("Render(%q) error %q names neither the format nor the known ones", f, err)
		}
		if buf.Len() != 0 {
			t.Errorf("Render(%q) wrote %d bytes before failing", f, buf.Len())
		}
	}
}

// stripCommandGuard removes the ::stop-commands:: guard (its token is random) around the github format's
// text part, after checking that it opens and closes with the same token.
func stripCommandGuard(s string) string {
	lines := strings.Split(s, "\n")
	var out []string
	token := ""
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "::stop-commands::"):
			token = strings.TrimPrefix(l, "::stop-commands::")
		case token != "" && l == "::"+token+"::":
			token = ""
		default:
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
