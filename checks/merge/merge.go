// Package merge is the one merge decision of catalogbot: facts about a pull request in (the check and the
// base it ran against, the pull request's current head and base, the approvals that count, labels, holds,
// mergeability, the base branch's configuration), the conditions for merging out, each with a stable id
// and the text both front-ends print. The bot (readiness comment) and the Action (step summary) gather the
// facts their own way and call Decide; neither has merge rules of its own. It does no I/O.
package merge

import (
	"fmt"
	"slices"
	"strings"

	"github.com/catalogbot/catalogbot/checks/approval"
	"github.com/catalogbot/catalogbot/report"
)

// Condition ids: stable, for tests, logs and tools that read the conditions.
const (
	IDChecks           = "checks"              // the checks passed on the head
	IDCheckedBase      = "checked-base"        // the check ran against the pull request's current base branch
	IDBaseCurrent      = "base-current"        // the base branch's tip is the one the check merged the head into
	IDCheckApprovals   = "check-approvals"     // no approval the check weighed was withdrawn since
	IDConfig           = "config"              // the base branch's configuration is valid
	IDApprovals        = "approvals"           // merge.requiredApprovals approvals count
	IDMaintainerReview = "maintainer-review"   // a maintainer approved the App's review-needed promotion
	IDLabel            = "label"               // a merge.requiredLabels label is set (one condition per label)
	IDHold             = "hold"                // the pull request is not on hold
	IDOpen             = "open"                // the pull request is open
	IDDraft            = "draft"               // the pull request is not a draft
	IDMergeable        = "mergeable"           // GitHub reports no merge conflict
	IDStaleApprovals   = "stale-approvals"     // information: approvals a push dropped
	IDWithdrawn        = "withdrawn-approvals" // information: approvals withdrawn (/approve cancel, a later review)
)

// Check is a completed check of the pull request.
type Check struct {
	// Verdict is the check's verdict (report.Pass is "pass").
	Verdict string
	// HeadSHA is the head it checked; BaseRef the base branch it checked against, BaseTip that branch's
	// tip: the check ran on the merge of HeadSHA into BaseTip, under BaseTip's configuration and owners.
	HeadSHA, BaseRef, BaseTip string
	// URL is where its details are ("" when none).
	URL string
	// Approvers are the approvals the check weighed (the owners stage may allow a change on one):
	// approval.Result.Current when it ran.
	Approvers []string
}

// Facts are what Decide weighs. The front-end reads them from GitHub (the pull request as it is now),
// from the check it recorded and from the configuration of the base branch's tip the check used.
type Facts struct {
	// Check is the latest completed check of the pull request's current head against its current base
	// branch; nil when there is none.
	Check *Check
	// Head, BaseRef are the pull request's current head commit and base branch.
	Head, BaseRef string
	// BaseTip is the base branch's tip now, read just before merging ("" when the front-end did not look
	// it up; then it is not compared). The check judged what lands only while it is Check.BaseTip: a tip
	// that moved is never merged over, the checks run again on the merge into it.
	BaseTip string
	// State is "open" or "closed"; Merged, Draft as GitHub says; Mergeable nil while GitHub computes it.
	State     string
	Merged    bool
	Draft     bool
	Mergeable *bool
	// Labels are the pull request's labels.
	Labels []string
	// HoldLabel is the hold label ("" when holds are not enforced); Held is set when the hold's history
	// has one in force, whatever the labels say (a label taken off by someone who may not lift the hold,
	// or while the pull request was closed, lifts nothing); Holders who placed it (empty: unknown).
	HoldLabel string
	Held      bool
	Holders   []string
	// ConfigError says why the base branch's configuration is invalid ("" when it is valid).
	ConfigError string
	// ConfigFile names the configuration file in texts (".catalogbot.yaml").
	ConfigFile string
	// RequiredApprovals and RequiredLabels are merge.requiredApprovals and merge.requiredLabels.
	RequiredApprovals int
	RequiredLabels    []string
	// Approvals are whose approvals count (approval.Evaluate under merge.approvers), read when deciding.
	Approvals approval.Result
	// Release names the package when the check found the pull request to be the App's own release of it,
	// changing only that package's templates and catalogs, under release.autoMerge of the base
	// configuration: it needs no approvals. "" for every other pull request.
	Release string
	// Promotion names the package when the check found the pull request to be the App's own promotion of
	// it (strategy always) into a new catalog, changing only its ci.yaml and its directory there, under
	// promotion.autoMerge of the base configuration: it needs no approvals. "" for every other pull request.
	Promotion string
	// ReviewNeeded names the package when the pull request is the App's promotion of a package whose
	// fbc.version_promotion_strategy is review-needed: a maintainer's approval (Approvals.Maintainers) is
	// required, whoever else approved. "" for every other pull request.
	ReviewNeeded string
}

// Condition is one requirement for merging, met or not, or a line of information (Info: Met is ignored).
type Condition struct {
	ID   string
	Met  bool
	Info bool
	Text string
}

// Decide lists every condition for merging the pull request, in a fixed order.
func Decide(f Facts) []Condition {
	var out []Condition
	add := func(id string, met bool, format string, args ...any) {
		out = append(out, Condition{ID: id, Met: met, Text: fmt.Sprintf(format, args...)})
	}
	// Names reach Markdown only escaped (a branch or label name may hold backticks, mentions or links).
	code := report.CodeSpan
	c := f.Check
	switch {
	case c == nil:
		add(IDChecks, false, "catalogbot checks have not completed on the head %s yet", short(f.Head))
	case c.HeadSHA != f.Head:
		add(IDChecks, false, "the head moved to %s after the checks of %s: the new head is checked on its own", short(f.Head), short(c.HeadSHA))
	case c.Verdict == "pass":
		add(IDChecks, true, "catalogbot checks passed on %s against %s%s", short(c.HeadSHA), code(c.BaseRef), details(c.URL))
	default:
		add(IDChecks, false, "catalogbot checks did not pass on %s against %s: %s%s", short(c.HeadSHA), code(c.BaseRef), c.Verdict, details(c.URL))
	}
	if c != nil && !strings.EqualFold(c.BaseRef, f.BaseRef) {
		add(IDCheckedBase, false, "the checks ran against %s, but the pull request now targets %s: they run again against %s",
			code(c.BaseRef), code(f.BaseRef), code(f.BaseRef))
	}
	if c != nil && f.BaseTip != "" && c.BaseTip != f.BaseTip {
		add(IDBaseCurrent, false, "%s moved to %s after the checks of the merge into %s: the checks run again on the merge into %s",
			code(f.BaseRef), short(f.BaseTip), short(c.BaseTip), short(f.BaseTip))
	}
	if gone := Withdrawn(checkApprovers(c), f.Approvals.Current); len(gone) > 0 {
		add(IDCheckApprovals, false, "the checks weighed approvals withdrawn since (%s): they run again without them", report.Text(strings.Join(gone, ", ")))
	}
	if f.ConfigError != "" {
		add(IDConfig, false, "the base branch's %s is invalid (%s): fix it there; nothing merges until then", f.ConfigFile, report.Text(f.ConfigError))
	}
	switch n := f.RequiredApprovals; {
	case n > 0 && f.Release != "":
		add(IDApprovals, true, "no approval needed: the App's release of %s changes only its templates and catalogs (release.autoMerge)", code(f.Release))
	case n > 0 && f.Promotion != "":
		add(IDApprovals, true, "no approval needed: the App's promotion of %s changes only its ci.yaml and its new catalog (promotion.autoMerge)", code(f.Promotion))
	case n > 0:
		add(IDApprovals, len(f.Approvals.Counted) >= n, "%s", approvalText(f.Approvals, n))
	}
	if f.ReviewNeeded != "" {
		if m := f.Approvals.Maintainers; len(m) > 0 {
			add(IDMaintainerReview, true, "a maintainer approved the promotion of %s (%s)", code(f.ReviewNeeded), report.Text(strings.Join(m, ", ")))
		} else {
			add(IDMaintainerReview, false, "a maintainer must approve the promotion of %s (its fbc.version_promotion_strategy is review-needed; a package owner's approval is not enough)",
				code(f.ReviewNeeded))
		}
	}
	for _, l := range f.RequiredLabels {
		if hasLabel(f.Labels, l) {
			add(IDLabel, true, "label %s is set", code(l))
		} else {
			add(IDLabel, false, "label %s is required", code(l))
		}
	}
	switch {
	case f.HoldLabel == "" || (!f.Held && !hasLabel(f.Labels, f.HoldLabel)):
		add(IDHold, true, "not on hold")
	case len(f.Holders) > 0:
		add(IDHold, false, "on hold (label %s, placed by %s): `/unhold` by them or a maintainer releases it",
			code(f.HoldLabel), report.Text(strings.Join(f.Holders, ", ")))
	default:
		add(IDHold, false, "on hold (label %s): `/unhold` by a maintainer releases it", code(f.HoldLabel))
	}
	if f.Merged || (f.State != "" && f.State != "open") {
		add(IDOpen, false, "the pull request is %s", stateText(f))
	}
	if f.Draft {
		add(IDDraft, false, "the pull request is a draft")
	}
	if f.Mergeable != nil && !*f.Mergeable {
		add(IDMergeable, false, "GitHub reports merge conflicts with the base branch")
	}
	if t := staleText(f.Approvals); t != "" {
		out = append(out, Condition{ID: IDStaleApprovals, Info: true, Text: t})
	}
	if len(f.Approvals.Withdrawn) > 0 {
		out = append(out, Condition{ID: IDWithdrawn, Info: true, Text: "Approvals withdrawn (`/approve cancel`, or a later review requesting changes or dismissed): " +
			strings.Join(f.Approvals.Withdrawn, ", ") + "."})
	}
	return out
}

// Withdrawn are the approvers a check weighed (weighed) whose approval is no longer current (case
// insensitive), sorted as weighed.
func Withdrawn(weighed, current []string) []string {
	var gone []string
	for _, w := range weighed {
		if !slices.ContainsFunc(current, func(c string) bool { return strings.EqualFold(c, w) }) {
			gone = append(gone, w)
		}
	}
	return gone
}

func checkApprovers(c *Check) []string {
	if c == nil {
		return nil
	}
	return c.Approvers
}

// Ready reports whether every condition is met.
func Ready(cs []Condition) bool { return len(Unmet(cs)) == 0 }

// Unmet are the conditions not met (information excepted).
func Unmet(cs []Condition) []Condition {
	var out []Condition
	for _, c := range cs {
		if !c.Met && !c.Info {
			out = append(out, c)
		}
	}
	return out
}

// Markdown renders conditions as the readiness comment and the step summary do: unmet first, then met,
// then information.
func Markdown(cs []Condition) string {
	var b strings.Builder
	var unmet, met, info []string
	for _, c := range cs {
		switch {
		case c.Info:
			info = append(info, c.Text)
		case c.Met:
			met = append(met, "- [x] "+c.Text)
		default:
			unmet = append(unmet, "- [ ] "+c.Text)
		}
	}
	if len(unmet) > 0 {
		b.WriteString("**Not yet met:**\n" + strings.Join(unmet, "\n") + "\n\n")
	}
	if len(met) > 0 {
		b.WriteString("**Met:**\n" + strings.Join(met, "\n") + "\n\n")
	}
	for _, n := range info {
		b.WriteString(n + "\n\n")
	}
	return b.String()
}

func stateText(f Facts) string {
	if f.Merged {
		return "merged"
	}
	return f.State
}

func details(url string) string {
	if url == "" {
		return ""
	}
	return " ([details](" + url + "))"
}

func hasLabel(labels []string, l string) bool {
	for _, x := range labels {
		if strings.EqualFold(x, l) {
			return true
		}
	}
	return false
}

// approvalText is the approvals condition: how many count of how many are required, whose approval
// would count, whose did not.
func approvalText(res approval.Result, required int) string {
	have := len(res.Counted)
	text := fmt.Sprintf("%d of %d required approvals", min(have, required), required)
	if have > 0 {
		text += " (" + strings.Join(res.Counted, ", ") + ")"
	}
	if len(res.CouldApprove) > 0 {
		text += "\n  - approvals that count: " + strings.Join(res.CouldApprove, ", ")
	} else {
		text += "\n  - no one may approve this change under the base branch's configuration"
	}
	if len(res.Ineligible) > 0 {
		text += "\n  - not counted (may not approve this change): " + strings.Join(res.Ineligible, ", ")
	}
	return text
}

// staleText says which approvals a push dropped ("" when none).
func staleText(res approval.Result) string {
	if len(res.Stale) == 0 {
		return ""
	}
	var parts []string
	for _, s := range res.Stale {
		parts = append(parts, fmt.Sprintf("%s (on %s)", s.User, short(s.SHA)))
	}
	return "Approvals given on an earlier head no longer count (a push drops them): " + strings.Join(parts, ", ") +
		". Approve the current head again."
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
