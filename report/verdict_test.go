package report_test

import (
	"errors"
	"testing"

	"github.com/catalogbot/catalogbot/diag"

	"github.com/catalogbot/catalogbot/report"
)

func TestVerdictAndExitCode(t *testing.T) {
	const (
		P = report.Pass
		F = report.Fail
		A = report.ActionRequired
		E = report.Error
		S = report.Skipped
	)
	for _, tc := range []struct {
		stages  []report.Status
		verdict report.Status
		exit    int
	}{
		{nil, P, 0},
		{[]report.Status{S}, P, 0},
		{[]report.Status{S, S, S}, P, 0},
		{[]report.Status{P, S}, P, 0},
		{[]report.Status{P, F, P}, F, 1},
		{[]report.Status{F, S}, F, 1},
		{[]report.Status{F, A}, A, 2},
		{[]report.Status{A, F}, A, 2},
		{[]report.Status{A}, A, 2},
		// an outage does not outrank a broken change (issue 14 item 2), nor a configuration problem
		{[]report.Status{E, A, F, P, S}, A, 2},
		{[]report.Status{S, P, F, A, E}, A, 2},
		{[]report.Status{F, F, F, E}, F, 1},
		{[]report.Status{E, F}, F, 1},
		{[]report.Status{P, E}, E, 3},
		{[]report.Status{E, S}, E, 3},
	} {
		r := &report.Report{}
		for _, s := range tc.stages {
			r.Stages = append(r.Stages, report.Stage{Name: string(s), Status: s})
		}
		if got := r.Verdict(); got != tc.verdict {
			t.Errorf("Verdict(%v) = %s, want %s", tc.stages, got, tc.verdict)
		}
		if got := r.ExitCode(); got != tc.exit {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.stages, got, tc.exit)
		}
	}
}

func TestStatusOf(t *testing.T) {
	bad := []diag.Diagnostic{{Severity: diag.Error, Message: "broken"}}
	warn := []diag.Diagnostic{{Severity: diag.Warning, Message: "advice"}}
	infra := diag.InfraError(errors.New("registry down"))
	for _, tc := range []struct {
		name string
		ds   []diag.Diagnostic
		err  error
		want report.Status
		exit int
	}{
		{"nothing", nil, nil, report.Pass, 0},
		{"warnings", warn, nil, report.Pass, 0},
		{"errors", bad, nil, report.Fail, 1},
		{"infra only", warn, infra, report.Error, 3},
		{"internal", nil, errors.New("bug"), report.Error, 3},
		{"errors and infra", bad, infra, report.Fail, 1},
		{"invalid error", nil, diag.InvalidError(errors.New("bad")), report.Fail, 1},
		{"usage", nil, diag.UsageError(errors.New("bad flag")), report.ActionRequired, 2},
		{"errors and usage", bad, diag.UsageError(errors.New("bad config")), report.ActionRequired, 2},
	} {
		got := report.StatusOf(tc.ds, tc.err)
		if got != tc.want || got.ExitCode() != tc.exit {
			t.Errorf("%s: StatusOf = %s (exit %d), want %s (exit %d)", tc.name, got, got.ExitCode(), tc.want, tc.exit)
		}
		if tc.ds == nil && report.ExitCodeOf(tc.err) != tc.exit {
			t.Errorf("%s: ExitCodeOf = %d, want %d", tc.name, report.ExitCodeOf(tc.err), tc.exit)
		}
	}
}
