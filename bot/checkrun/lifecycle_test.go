package checkrun

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/bot/queue"
)

// The ends of a check job, as the worker settles them after its handler returned.
func TestJobEnded(t *testing.T) {
	failed := errors.New("registry down")
	for _, c := range []struct {
		name       string
		cause, err error
		final      bool
		ok         bool
		want       Ending
	}{
		{"shutdown", queue.ErrShutdown, failed, true, false, Ending{}},
		{"lease lost", fmt.Errorf("stop: %w", queue.ErrLeaseLost), nil, true, false, Ending{}},
		{"superseded", queue.ErrSuperseded, nil, false, true, Ending{Conclusion: "cancelled", Title: "Cancelled", Summary: "Superseded by a newer push or re-run."}},
		{"past its deadline", queue.ErrDeadline, failed, false, true, Ending{Started: true, Conclusion: "failure", Title: DeadlineTitle}},
		{"nothing checked", nil, nil, false, true, Ending{Conclusion: "skipped", Title: "Not checked"}},
		{"failed for good", nil, failed, true, true, Ending{Started: true, Conclusion: "failure", Title: "catalogbot could not check this commit"}},
		{"retried", nil, failed, false, false, Ending{}},
	} {
		got, ok := JobEnded(c.cause, c.err, c.final, "registry down")
		if ok != c.ok || got.Started != c.want.Started || got.Conclusion != c.want.Conclusion || got.Title != c.want.Title ||
			c.want.Summary != "" && got.Summary != c.want.Summary {
			t.Errorf("%s: %+v, %v; want %+v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
	if e, _ := JobEnded(nil, failed, true, "registry down"); !strings.Contains(e.Summary, ": registry down\n\nComment `/retest`") {
		t.Errorf("a job failed for good says %q", e.Summary)
	}
}

// A stopped check's check run: closed unless the job runs again.
func TestInterrupted(t *testing.T) {
	if _, ok := Interrupted(queue.ErrShutdown); ok {
		t.Error("a check stopped by a shutdown is closed: its next attempt cannot take it over")
	}
	if e, ok := Interrupted(queue.ErrSuperseded); !ok || !e.Started || e.Conclusion != "cancelled" {
		t.Errorf("superseded: %+v, %v", e, ok)
	}
	if e, ok := Interrupted(queue.ErrDeadline); !ok || e.Conclusion != "failure" || e.Title != DeadlineTitle || !strings.Contains(e.Summary, "timeouts.job") {
		t.Errorf("past its deadline: %+v, %v", e, ok)
	}
}

func TestSupersededBy(t *testing.T) {
	for recorded, want := range map[string]string{
		PullRequestClosed:      "The pull request was closed.",
		"superseded by job 12": "Superseded by job 12.",
		"":                     "Superseded before the check started.",
	} {
		if e := SupersededBy(recorded); e.Summary != want || e.Conclusion != "cancelled" || e.Started {
			t.Errorf("%q: %+v", recorded, e)
		}
	}
}
