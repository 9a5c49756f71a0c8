package report_test

import (
	"bytes"
	"encoding/json"
	"net/url"
	"testing"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/report"
)

// sarifDoc is the part of SARIF 2.1.0 the checks below read; fields are pointers or raw where absence
// must be told from a zero value.
type sarifDoc struct {
	Schema  *string `json:"$schema"`
	Version *string `json:"version"`
	Runs    []struct {
		Tool *struct {
			Driver *struct {
				Name    *string `json:"name"`
				Version string  `json:"version"`
				Rules   []struct {
					ID               string `json:"id"`
					ShortDescription struct {
						Text string `json:"text"`
					} `json:"shortDescription"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Results *[]struct {
			RuleID    *string `json:"ruleId"`
			RuleIndex *int    `json:"ruleIndex"`
			Level     string  `json:"level"`
			Message   *struct {
				Text *string `json:"text"`
			} `json:"message"`
			Locations []struct {
				PhysicalLocation *struct {
					ArtifactLocation *struct {
						URI *string `json:"uri"`
					} `json:"artifactLocation"`
					Region *struct {
						StartLine   *int `json:"startLine"`
						StartColumn *int `json:"startColumn"`
					} `json:"region"`
				} `json:"physicalLocation"`
			} `json:"locations"`
		} `json:"results"`
	} `json:"runs"`
}

// checkSARIF checks a log against SARIF 2.1.0's required properties and catalogbot's promises: one
// result per diagnostic, in diag.Sort order, each pointing at its rule and, when it has a file, at a
// relative URI that decodes to root/file with the diagnostic's line and column.
func checkSARIF(t *testing.T, data []byte, r *report.Report, root string) {
	t.Helper()
	var doc sarifDoc
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("decode SARIF: %v\n%s", err, data)
	}
	if doc.Version == nil || *doc.Version != "2.1.0" {
		t.Fatalf("version = %v, want 2.1.0", doc.Version)
	}
	if doc.Schema == nil || *doc.Schema == "" {
		t.Errorf("$schema is missing")
	}
	if len(doc.Runs) != 1 {
		t.Fatalf("%d runs, want 1", len(doc.Runs))
	}
	run := doc.Runs[0]
	if run.Tool == nil || run.Tool.Driver == nil || run.Tool.Driver.Name == nil || *run.Tool.Driver.Name == "" {
		t.Fatalf("runs[0].tool.driver.name is missing")
	}
	rules := run.Tool.Driver.Rules
	seen := map[string]bool{}
	for i, rule := range rules {
		if rule.ID == "" || seen[rule.ID] {
			t.Errorf("rules[%d].id %q is empty or repeated", i, rule.ID)
		}
		seen[rule.ID] = true
	}
	if run.Results == nil {
		t.Fatalf("runs[0].results is missing (an empty run must say results: [])")
	}
	ds := r.Diagnostics()
	if len(*run.Results) != len(ds) {
		t.Fatalf("%d results for %d diagnostics", len(*run.Results), len(ds))
	}
	for i, res := range *run.Results {
		d := ds[i]
		if res.Message == nil || res.Message.Text == nil || *res.Message.Text == "" {
			t.Errorf("results[%d].message.text is missing", i)
		}
		if res.RuleID == nil || *res.RuleID == "" {
			t.Errorf("results[%d].ruleId is missing", i)
			continue
		}
		if res.RuleIndex == nil || *res.RuleIndex < 0 || *res.RuleIndex >= len(rules) || rules[*res.RuleIndex].ID != *res.RuleID {
			t.Errorf("results[%d].ruleIndex %v does not point at rule %q", i, res.RuleIndex, *res.RuleID)
		}
		if want := map[diag.Severity]string{diag.Error: "error", diag.Warning: "warning", diag.Note: "note"}[d.Severity]; res.Level != want {
			t.Errorf("results[%d].level = %q, want %q", i, res.Level, want)
		}
		if d.File == "" {
			if len(res.Locations) != 0 {
				t.Errorf("results[%d] has locations but its diagnostic has no file", i)
			}
			continue
		}
		if len(res.Locations) != 1 {
			t.Errorf("results[%d] has %d locations, want 1", i, len(res.Locations))
			continue
		}
		pl := res.Locations[0].PhysicalLocation
		if pl == nil || pl.ArtifactLocation == nil || pl.ArtifactLocation.URI == nil || *pl.ArtifactLocation.URI == "" {
			t.Errorf("results[%d].locations[0].physicalLocation.artifactLocation.uri is missing", i)
			continue
		}
		uri := *pl.ArtifactLocation.URI
		u, err := url.Parse(uri)
		if err != nil || u.IsAbs() || u.Host != "" {
			t.Errorf("results[%d] uri %q is not a relative URI reference (%v)", i, uri, err)
		} else if want := joinRoot(root, d.File); u.Path != want {
			t.Errorf("results[%d] uri %q decodes to %q, want %q", i, uri, u.Path, want)
		}
		switch {
		case d.Line == 0 && pl.Region != nil:
			t.Errorf("results[%d] has a region but its diagnostic has no line", i)
		case d.Line > 0 && (pl.Region == nil || pl.Region.StartLine == nil):
			t.Errorf("results[%d].locations[0].physicalLocation.region.startLine is missing", i)
		case d.Line > 0:
			if *pl.Region.StartLine != d.Line {
				t.Errorf("results[%d] startLine = %d, want %d", i, *pl.Region.StartLine, d.Line)
			}
			if col := pl.Region.StartColumn; d.Column > 0 && (col == nil || *col != d.Column) || d.Column == 0 && col != nil {
				t.Errorf("results[%d] startColumn = %v, want %d", i, col, d.Column)
			}
		}
	}
}

func joinRoot(root, file string) string {
	if root == "" || root == "." {
		return file
	}
	return root + "/" + file
}

func TestSARIFRequiredFields(t *testing.T) {
	odd := &report.Report{Stages: []report.Stage{{Name: "validate", Status: report.Fail, Diagnostics: []diag.Diagnostic{
		{Severity: diag.Error, Check: "validate", File: "a:b/c d#e?f.json", Line: 3, Message: "scheme-looking, fragment and query characters"},
		{Severity: diag.Warning, Check: "validate", Rule: "x", File: "ünïcode/catalog.json", Message: "no line"},
	}}}}
	for _, tc := range []struct {
		name, root string
		r          *report.Report
	}{
		{"sample", "", sample()},
		{"sample under a root", "operators", sample()},
		{"dot root", ".", sample()},
		{"odd paths", "", odd},
		{"empty", "", &report.Report{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := report.WriteSARIF(&buf, tc.r, "v0.0.1", tc.root); err != nil {
				t.Fatal(err)
			}
			checkSARIF(t, buf.Bytes(), tc.r, tc.root)
		})
	}
}
