package report_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/report"
)

func TestCheckRunMapping(t *testing.T) {
	for v, want := range map[report.Status]string{report.Pass: "success", report.Fail: "failure",
		report.ActionRequired: "action_required", report.Error: "failure", report.Skipped: "failure"} {
		if got := report.CheckConclusion(v); got != want {
			t.Errorf("CheckConclusion(%s) = %s, want %s", v, got, want)
		}
	}
	r := &report.Report{Stages: []report.Stage{{Name: "validate", Status: report.Fail, Diagnostics: []diag.Diagnostic{
		{Severity: diag.Error, Check: "validate", Rule: "r1", File: "catalog/a/catalog.json", Line: 7, Message: "m1", Hint: "h1"},
		{Severity: diag.Warning, Check: "validate", File: "catalog/b/catalog.json", Message: "m2"},
		{Severity: diag.Note, Check: "validate", File: "catalog/c/catalog.json", Message: "m3"},
		{Severity: diag.Error, Check: "validate", Message: "no file: summary only"},
	}}}}
	out := report.CheckRun(r, 2)
	if len(out.Annotations) != 2 || out.Dropped != 1 {
		t.Fatalf("annotations %+v dropped %d", out.Annotations, out.Dropped)
	}
	if a := out.Annotations[0]; a.Path != "catalog/a/catalog.json" || a.StartLine != 7 || a.EndLine != 7 || a.Level != "failure" ||
		a.Title != "validate/r1" || a.Message != "m1\nh1" {
		t.Errorf("first annotation %+v", a)
	}
	if a := out.Annotations[1]; a.StartLine != 1 || a.Level != "warning" || a.Title != "validate" {
		t.Errorf("second annotation %+v", a)
	}
	if !strings.Contains(out.Summary, "1 more annotations not shown") {
		t.Errorf("the summary does not say an annotation was dropped:\n%s", out.Summary)
	}
	if out.Title != "Failed: validate (2 errors)" || out.Conclusion != "failure" {
		t.Errorf("title %q conclusion %q", out.Title, out.Conclusion)
	}
	if all := report.CheckRun(r, 10); all.Dropped != 0 || strings.Contains(all.Summary, "not shown") || len(all.Annotations) != 3 {
		t.Errorf("nothing dropped: %d annotations, dropped %d", len(all.Annotations), all.Dropped)
	}
	// A broken change during an outage fails (issue 14 item 2): the title says both, and counts only the
	// change's own errors.
	r.Stages = append(r.Stages, report.Stage{Name: "images", Status: report.Error, Err: "registry down", Diagnostics: []diag.Diagnostic{
		{Severity: diag.Error, Check: "images", Rule: diag.RuleRegistryUnavailable, File: "catalog/a/catalog.json", Message: "cannot verify"}}})
	out = report.CheckRun(r, 10)
	if want := "Failed: validate (2 errors); infrastructure failure in images"; out.Title != want || out.Conclusion != "failure" {
		t.Errorf("with an outage: title %q conclusion %q, want %q failure", out.Title, out.Conclusion, want)
	}
	for _, c := range []struct {
		stages []report.Stage
		want   string
	}{
		{[]report.Stage{{Name: "owners", Status: report.Pass}}, "All stages passed"},
		{[]report.Stage{{Name: "config", Status: report.ActionRequired}}, "Configuration problem: config"},
		{[]report.Stage{{Name: "images", Status: report.Error}}, "Infrastructure failure in images: not your change; comment /retest"},
	} {
		if got := report.CheckTitle(&report.Report{Stages: c.stages}); got != c.want {
			t.Errorf("title %q, want %q", got, c.want)
		}
	}
}

// The check run's annotations, the SARIF log and the workflow commands name each diagnostic's rule the same
// way. The attack is a front-end formatting its own title ("check: rule"): the names must match one for one.
func TestRuleNamingIsOneRule(t *testing.T) {
	r := sample()
	r.Stages = append(r.Stages, report.Stage{Name: "owners", Status: report.Pass, Diagnostics: []diag.Diagnostic{
		{Severity: diag.Warning, Check: "owners", File: "catalog/x/catalog.json", Line: 3, Message: "no rule of its own"}}})
	var ds []diag.Diagnostic
	for _, d := range r.Diagnostics() {
		if d.File != "" {
			ds = append(ds, d)
		}
	}
	if len(ds) < 2 {
		t.Fatalf("the sample has %d located diagnostics; the test needs several", len(ds))
	}
	withRule := 0
	for _, d := range ds {
		if d.Rule != "" {
			withRule++
		}
	}
	if withRule == 0 || withRule == len(ds) {
		t.Fatalf("the sample needs located diagnostics with and without a rule (%d of %d have one)", withRule, len(ds))
	}
	anns := report.CheckRun(r, len(ds)).Annotations
	var buf bytes.Buffer
	if err := report.WriteSARIF(&buf, r, "test", ""); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID    string `json:"ruleId"`
				Locations []any  `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	var sarif []string
	for _, res := range log.Runs[0].Results {
		if len(res.Locations) > 0 {
			sarif = append(sarif, res.RuleID)
		}
	}
	buf.Reset()
	if err := report.WriteGitHub(&buf, r, ""); err != nil {
		t.Fatal(err)
	}
	if len(anns) != len(ds) || len(sarif) != len(ds) {
		t.Fatalf("%d annotations and %d located SARIF results for %d located diagnostics", len(anns), len(sarif), len(ds))
	}
	for i, d := range ds {
		want := d.Check
		if d.Rule != "" {
			want += "/" + d.Rule
		}
		if anns[i].Title != want || sarif[i] != want || report.RuleID(d) != want {
			t.Errorf("diagnostic %d: annotation %q, SARIF %q, want %q", i, anns[i].Title, sarif[i], want)
		}
		if i < report.MaxAnnotations && !strings.Contains(buf.String(), "title="+strings.ReplaceAll(want, ":", "%3A")) {
			t.Errorf("diagnostic %d: no workflow command titled %q", i, want)
		}
	}
}
