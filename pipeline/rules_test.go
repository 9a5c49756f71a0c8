package pipeline_test

import (
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/report"
)

// The rules (configuration and owners files) a run applies come from Input.Rules when given, not from
// the base revision: alice branches from a commit where she still owns demo-operator, and the tip that
// removed her decides.
func TestRulesFromTheTipDecideOwners(t *testing.T) {
	withOwnersFile := strings.Replace(baseConfig, "  demo-operator: [alice]\n", "", 1) + "ownersFrom: OWNERS\n"
	for _, tc := range []struct {
		name             string
		old, tip         map[string]string
		wantOld, wantTip report.Status
	}{
		{
			name:    "owners in the configuration",
			old:     map[string]string{".catalogbot.yaml": baseConfig},
			tip:     map[string]string{".catalogbot.yaml": strings.Replace(baseConfig, "demo-operator: [alice]", "demo-operator: [carol]", 1)},
			wantOld: report.Pass, wantTip: report.Fail,
		},
		{
			name:    "owners files",
			old:     map[string]string{".catalogbot.yaml": withOwnersFile, "catalog/demo-operator/OWNERS": "approvers:\n- alice\n"},
			tip:     map[string]string{".catalogbot.yaml": withOwnersFile, "catalog/demo-operator/OWNERS": "approvers:\n- carol\n"},
			wantOld: report.Pass, wantTip: report.Fail,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			w := newWorld(t)
			dir := t.TempDir()
			g := initRepo(t, dir)
			base := tree{catalog: merge(w.pkg(demoPkg, "0.1.0"), w.pkg(otherPkg, "0.1.0")), files: tc.old}
			old := g.commit(ctx, t, base, "base", "catalog-admin")
			tip := g.commit(ctx, t, tree{catalog: base.catalog, files: tc.tip}, "alice no longer owns demo", "catalog-admin")
			g.branch(t, "pr", old)
			g.commit(ctx, t, tree{catalog: merge(w.pkg(demoPkg, "0.1.0", "0.2.0"), w.pkg(otherPkg, "0.1.0")), files: tc.old}, "release", "alice")
			repo, err := gitrepo.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			rules, st := pipeline.LoadRules(repo, tip.String())
			if st.Status != report.Pass {
				t.Fatalf("rules at the tip: %+v", st)
			}
			for _, run := range []struct {
				rules *pipeline.Rules
				want  report.Status
			}{{nil, tc.wantOld}, {rules, tc.wantTip}} {
				r, err := pipeline.Run(ctx, pipeline.Input{Repo: repo, Base: old.String(), Head: "pr", Rules: run.rules, Author: "alice", SkipImages: true})
				if err != nil {
					t.Fatal(err)
				}
				if got := stage(r, "owners"); got.Status != run.want {
					t.Errorf("rules from the tip %v: owners %s (%s), want %s", run.rules != nil, got.Status, got.Summary, run.want)
				}
			}
		})
	}
}

// An invalid configuration yields no rules, and a config stage that says so with the file's line.
func TestLoadRulesInvalid(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	g := initRepo(t, dir)
	c := g.commit(ctx, t, tree{files: map[string]string{".catalogbot.yaml": strings.Replace(baseConfig, "maintainers:", "maintainer:", 1)}}, "typo", "catalog-admin")
	repo, err := gitrepo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	rules, st := pipeline.LoadRules(repo, c.String())
	if rules != nil || st.Name != "config" || st.Status != report.ActionRequired || len(st.Diagnostics) == 0 ||
		st.Diagnostics[0].File != ".catalogbot.yaml" || st.Diagnostics[0].Line != 6 {
		t.Errorf("rules %v, stage %+v", rules, st)
	}
}

func stage(r *report.Report, name string) report.Stage {
	for _, s := range r.Stages {
		if s.Name == name {
			return s
		}
	}
	return report.Stage{Status: "missing"}
}
