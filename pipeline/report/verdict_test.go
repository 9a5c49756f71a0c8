package report_test

import (
	"testing"

	"github.com/catalogbot/catalogbot/pipeline/report"
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
		{[]report.Status{E, A, F, P, S}, E, 3},
		{[]report.Status{S, P, F, A, E}, E, 3},
		{[]report.Status{P, E}, E, 3},
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
