package pipeline_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/report"
)

// A head that changes the same lines as the base since their merge base does not merge: there is no
// tree to run the stages on, so the report is one failed merge-result stage naming each conflicting path
// (nothing is judged on the head's tree alone), and only maintainers may approve the change.
func TestRunOnConflictingMerge(t *testing.T) {
	ctx := t.Context()
	cfg := "apiVersion: catalogbot.dev/v1alpha1\nkind: Config\nmaintainers: [admin]\nowners:\n  foo: [alice]\n"
	pkg := `{"schema": "olm.package", "name": "foo", "defaultChannel": "stable"}` + "\n"
	dir := filepath.Join(t.TempDir(), "repo")
	g := initRepo(t, dir)
	base := tree{files: map[string]string{".catalogbot.yaml": cfg, "catalog/foo/catalog.json": pkg}}
	from := g.commit(ctx, t, base, "base", "admin")
	g.commit(ctx, t, base.with(map[string]string{"catalog/foo/catalog.json": `{"schema": "olm.package", "name": "foo", "defaultChannel": "fast"}` + "\n"}), "main", "admin")
	g.branch(t, "pr", from)
	g.commit(ctx, t, base.with(map[string]string{"catalog/foo/catalog.json": `{"schema": "olm.package", "name": "foo", "defaultChannel": "beta"}` + "\n"}), "pr", "alice")
	repo, err := gitrepo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ch := prepareMerge(t, repo)
	if ch.Result != nil || !slices.Equal(ch.Conflicts, []string{"catalog/foo/catalog.json"}) {
		t.Fatalf("merge result %v, conflicts %v", ch.Result, ch.Conflicts)
	}
	if pol, err := ch.ApprovalPolicy(); err != nil || len(pol.PackageOwners) > 0 {
		t.Errorf("approval policy %+v (%v): want maintainers only", pol, err)
	}
	r, err := pipeline.Run(ctx, pipeline.Input{Change: ch, Author: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Stages) != 1 || r.Stages[0].Name != "merge-result" || r.Verdict() != report.Fail ||
		len(r.Stages[0].Diagnostics) != 1 || r.Stages[0].Diagnostics[0].File != "catalog/foo/catalog.json" {
		t.Errorf("report %+v", r.Stages)
	}
	if r.Outputs["head_sha"] != ch.Head.Hash.String() {
		t.Errorf("head_sha %s, want the pull request's head %s", r.Outputs["head_sha"], ch.Head.Hash)
	}
}
