package merge

import (
	"slices"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/approval"
)

func unmetIDs(cs []Condition) []string {
	var ids []string
	for _, c := range Unmet(cs) {
		ids = append(ids, c.ID)
	}
	return ids
}

// Every fact that must block merging blocks it, alone; with all of them right the pull request is ready.
func TestDecide(t *testing.T) {
	no := false
	ready := func() Facts {
		return Facts{
			Check: &Check{Verdict: "pass", HeadSHA: "h1", BaseRef: "main", BaseTip: "t1"},
			Head:  "h1", BaseRef: "main", BaseTip: "t1", State: "open", Labels: []string{"LGTM"},
			HoldLabel: "do-not-merge/hold", ConfigFile: ".catalogbot.yaml", RequiredApprovals: 1, RequiredLabels: []string{"lgtm"},
			Approvals: approval.Result{Current: []string{"admin"}, Counted: []string{"admin"}},
		}
	}
	if cs := Decide(ready()); !Ready(cs) {
		t.Fatalf("not ready: %+v", Unmet(cs))
	}
	for name, tc := range map[string]struct {
		edit func(*Facts)
		id   string
	}{
		"no check":            {func(f *Facts) { f.Check = nil }, IDChecks},
		"check failed":        {func(f *Facts) { f.Check.Verdict = "fail" }, IDChecks},
		"head moved":          {func(f *Facts) { f.Head = "h2" }, IDChecks},
		"retargeted":          {func(f *Facts) { f.BaseRef = "release" }, IDCheckedBase},
		"base moved":          {func(f *Facts) { f.BaseTip = "t2" }, IDBaseCurrent},
		"approval withdrawn":  {func(f *Facts) { f.Check.Approvers = []string{"admin", "alice"} }, IDCheckApprovals},
		"broken config":       {func(f *Facts) { f.ConfigError = "typo" }, IDConfig},
		"no approval":         {func(f *Facts) { f.Approvals = approval.Result{} }, IDApprovals},
		"ineligible approval": {func(f *Facts) { f.Approvals = approval.Result{Current: []string{"x"}, Ineligible: []string{"x"}} }, IDApprovals},
		"label missing":       {func(f *Facts) { f.Labels = nil }, IDLabel},
		"hold":                {func(f *Facts) { f.Labels = append(f.Labels, "Do-Not-Merge/Hold") }, IDHold},
		"hold without label":  {func(f *Facts) { f.Held = true }, IDHold},
		"closed":              {func(f *Facts) { f.State = "closed" }, IDOpen},
		"merged":              {func(f *Facts) { f.Merged = true }, IDOpen},
		"draft":               {func(f *Facts) { f.Draft = true }, IDDraft},
		"conflicts":           {func(f *Facts) { f.Mergeable = &no }, IDMergeable},
	} {
		f := ready()
		tc.edit(&f)
		if got := unmetIDs(Decide(f)); !slices.Equal(got, []string{tc.id}) {
			t.Errorf("%s: unmet %v, want [%s]", name, got, tc.id)
		}
	}
	// An unknown tip is not compared; an approval the check weighed counts again in another case.
	f := ready()
	f.BaseTip, f.Check.Approvers = "", []string{"ADMIN"}
	if !Ready(Decide(f)) {
		t.Error("an unknown tip or a current approval blocked")
	}
	// Any move of the tip blocks, whatever it changed: the check judged the merge into the old tip.
	f.BaseTip = "t2"
	if md := Markdown(Decide(f)); !strings.Contains(md, "`main` moved to t2 after the checks of the merge into t1: the checks run again on the merge into t2") {
		t.Errorf("base move text:\n%s", md)
	}
}

// The texts name the base the checks ran against, the holders, withdrawn and stale approvals.
func TestDecideTexts(t *testing.T) {
	f := Facts{Check: &Check{Verdict: "pass", HeadSHA: strings.Repeat("a", 40), BaseRef: "release-0.1", URL: "https://bot/runs/1"},
		Head: strings.Repeat("a", 40), BaseRef: "main", HoldLabel: "hold", Labels: []string{"hold"}, Holders: []string{"admin"},
		RequiredApprovals: 1, Approvals: approval.Result{Withdrawn: []string{"admin"}, Stale: []approval.Stale{{User: "bob", SHA: strings.Repeat("b", 40)}}}}
	md := Markdown(Decide(f))
	for _, want := range []string{
		"- [x] catalogbot checks passed on aaaaaaaaaaaa against `release-0.1` ([details](https://bot/runs/1))",
		"- [ ] the checks ran against `release-0.1`, but the pull request now targets `main`",
		"- [ ] 0 of 1 required approvals\n  - no one may approve",
		"- [ ] on hold (label `hold`, placed by admin)",
		"Approvals withdrawn (`/approve cancel`, or a later review requesting changes or dismissed): admin.",
		"Approvals given on an earlier head no longer count (a push drops them): bob (on bbbbbbbbbbbb)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("conditions lack %q:\n%s", want, md)
		}
	}
	if strings.Index(md, "- [ ]") > strings.Index(md, "- [x]") {
		t.Error("met conditions are listed before unmet ones")
	}
}

// The App's review-needed promotion waits for a maintainer's approval whoever else approved (a package
// owner's approval counts toward merge.requiredApprovals, not for this); the App's always promotion under
// promotion.autoMerge needs no approval.
func TestDecidePromotion(t *testing.T) {
	f := Facts{Check: &Check{Verdict: "pass", HeadSHA: "h1", BaseRef: "main"}, Head: "h1", BaseRef: "main", State: "open",
		RequiredApprovals: 1, ReviewNeeded: "dotvirt-operator",
		Approvals: approval.Result{Current: []string{"epheo"}, Counted: []string{"epheo"}}}
	cs := Decide(f)
	if got := unmetIDs(cs); !slices.Equal(got, []string{IDMaintainerReview}) {
		t.Errorf("an owner's approval of a review-needed promotion: unmet %v", got)
	}
	if md := Markdown(cs); !strings.Contains(md, "- [ ] a maintainer must approve the promotion of `dotvirt-operator`") {
		t.Errorf("text:\n%s", md)
	}
	f.Approvals = approval.Result{Current: []string{"admin", "epheo"}, Counted: []string{"admin", "epheo"}, Maintainers: []string{"admin"}}
	if cs := Decide(f); !Ready(cs) || !strings.Contains(Markdown(cs), "a maintainer approved the promotion of `dotvirt-operator` (admin)") {
		t.Errorf("a maintainer's approval: %+v", cs)
	}
	f = Facts{Check: f.Check, Head: "h1", BaseRef: "main", State: "open", RequiredApprovals: 1, Promotion: "ecr-secret-operator"}
	if cs := Decide(f); !Ready(cs) || !strings.Contains(Markdown(cs), "no approval needed: the App's promotion of `ecr-secret-operator`") {
		t.Errorf("the App's always promotion under promotion.autoMerge: %+v", cs)
	}
}
