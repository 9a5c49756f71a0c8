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
		"base moved, overlap": {func(f *Facts) { f.BaseTip, f.BaseMoveOverlap = "t2", []string{"etcd"} }, IDBaseCurrent},
		"base moved, rules":   {func(f *Facts) { f.BaseTip, f.BaseMoveRules = "t2", []string{".catalogbot.yaml"} }, IDBaseCurrent},
		"rules beat harmless": {func(f *Facts) { f.BaseTip, f.BaseMoveHarmless, f.BaseMoveRules = "t2", true, []string{"OWNERS"} }, IDBaseCurrent},
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
	// A base move the front-end found harmless does not block; an unknown tip is not compared.
	f := ready()
	f.BaseTip, f.BaseMoveHarmless = "t2", true
	if !Ready(Decide(f)) {
		t.Error("a harmless base move blocked")
	}
	f.BaseTip, f.BaseMoveHarmless = "", false
	if !Ready(Decide(f)) {
		t.Error("an unknown tip blocked")
	}
	// A move that changed a package the pull request changes too asks for the branch to be updated.
	f.BaseTip, f.BaseMoveOverlap = "t2", []string{"etcd", "foo"}
	if md := Markdown(Decide(f)); !strings.Contains(md, "changed etcd, foo, which this pull request also changes: update the branch") {
		t.Errorf("overlap text:\n%s", md)
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
