package checkrun

import (
	"errors"
	"fmt"
	"strings"

	"github.com/catalogbot/catalogbot/bot/queue"
)

// The lifecycle's decisions past the normal path (Announce, Start, Progress, Complete): how a run's check
// run ends when its check will not complete it, whoever closes it: the announcer (a queued job superseded
// or cancelled), the worker whose check was stopped (Interrupted), the worker once a check job's handler
// returned (JobEnded), a worker finding the pull request's head moved (HeadMoved). The bot hands them its
// runs (bot/checkruns.go); Owner.Settle closes the check run once.

// Ending closes a run's check run its check will not complete: Owner.Settle's conclusion, title and
// summary.
type Ending struct {
	// Started: the runs a worker started are closed too, not only those still queued.
	Started                    bool
	Conclusion, Title, Summary string
}

// PullRequestClosed is the reason the queue records for the jobs it cancels because their pull request
// was closed (SupersededBy reads it back).
const PullRequestClosed = "pull request closed"

// DeadlineTitle is the title of a check run whose job ran past its deadline (timeouts.job).
const DeadlineTitle = "Infrastructure failure: the check ran past its deadline: not your change; comment /retest"

// Cancelled ends the check run of a job that will never run, saying why.
func Cancelled(why string) Ending {
	return Ending{Conclusion: "cancelled", Title: "Cancelled", Summary: why}
}

// SupersededBy ends the check run of a queued job the queue superseded, from the reason the queue recorded
// (PullRequestClosed, or "superseded by job N").
func SupersededBy(recorded string) Ending {
	switch {
	case recorded == PullRequestClosed:
		return Cancelled("The pull request was closed.")
	case strings.HasPrefix(recorded, "superseded by job "):
		return Cancelled("Superseded by job " + strings.TrimPrefix(recorded, "superseded by job ") + ".")
	}
	return Cancelled("Superseded before the check started.")
}

// HeadMoved ends the check run announced for a job whose pull request's head moved to head (shortened)
// before the check started.
func HeadMoved(head string) Ending {
	return Cancelled(fmt.Sprintf("The pull request's head moved to %s before this check started; that commit is checked instead.", head))
}

// Interrupted ends the check run of a check whose job's context ended with cause: cancelled (superseded),
// failed past its deadline. False at shutdown or when the job's lease was lost: the job runs again and
// its next attempt takes the check run over.
func Interrupted(cause error) (Ending, bool) {
	if errors.Is(cause, queue.ErrShutdown) || errors.Is(cause, queue.ErrLeaseLost) {
		return Ending{}, false
	}
	if errors.Is(cause, queue.ErrDeadline) {
		// Not the author's doing, but nothing may pass: a failure, as infrastructure failures are.
		return Ending{Started: true, Conclusion: "failure", Title: DeadlineTitle, Summary: StopReason(cause)}, true
	}
	e := Cancelled(StopReason(cause))
	e.Started = true
	return e, true
}

// JobEnded ends the check runs a check job's handler left open, when it returned with err after its
// context ended with cause (nil: not stopped): announced but never started (the job was superseded, or
// found nothing to check), or started and not completed (past the deadline, or failed for good: final,
// why is err as the check run says it). False when the job runs again (retry, shutdown, lost lease) and
// keeps its runs for the next attempt.
func JobEnded(cause, err error, final bool, why string) (Ending, bool) {
	switch {
	case errors.Is(cause, queue.ErrShutdown) || errors.Is(cause, queue.ErrLeaseLost):
		return Ending{}, false
	case errors.Is(cause, queue.ErrSuperseded):
		return Cancelled(StopReason(cause)), true
	case errors.Is(cause, queue.ErrDeadline):
		return Interrupted(cause)
	case err == nil:
		return Ending{Conclusion: "skipped", Title: "Not checked",
			Summary: "The pull request was closed, merged, turned into a draft or pushed again before the check started."}, true
	case final:
		return Ending{Started: true, Conclusion: "failure", Title: "catalogbot could not check this commit",
			Summary: "The check failed for a reason that is not about this pull request's content: " + why +
				"\n\nComment `/retest` to run it again."}, true
	}
	return Ending{}, false
}

// StopReason says why a job stopped (cause: its context's).
func StopReason(cause error) string {
	switch {
	case errors.Is(cause, queue.ErrSuperseded):
		return "Superseded by a newer push or re-run."
	case errors.Is(cause, queue.ErrShutdown):
		return "The bot restarted; the check will run again."
	case errors.Is(cause, queue.ErrDeadline):
		return "The check ran past its deadline (timeouts.job in the bot's configuration): a registry or another service it needs did not answer in time. This is not a problem of the pull request; comment /retest to run it again."
	}
	return "Stopped: " + fmt.Sprint(cause)
}
