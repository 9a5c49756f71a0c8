package workflowlint

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// step is one step of a workflow's steps list, as text (from its "- " line to the next step's).
func steps(workflow string) []string {
	var out []string
	for _, part := range regexp.MustCompile(`(?m)^      - `).Split(workflow, -1)[1:] {
		out = append(out, "- "+part)
	}
	return out
}

// The example workflows work together on GitHub: a merge made with the workflow's GITHUB_TOKEN starts
// no push workflow, so merge-on-approval.yml merges with a GitHub App's installation token (minted by an
// earlier step of the job), for publish-on-push.yml to run after its merge; and every step that prints
// catalogbot's outputs runs when catalogbot failed too (if: always()), in the examples and in the
// README's snippet.
func TestExampleWorkflowsChainAndPrintOnFailure(t *testing.T) {
	ex := examples(t)
	merge := ex["merge-on-approval.yml"]
	var minted, merger string
	for _, s := range steps(merge) {
		if strings.Contains(s, "uses: actions/create-github-app-token@") {
			minted = regexp.MustCompile(`id: ([\w-]+)`).FindStringSubmatch(s)[1]
		}
		if strings.Contains(s, "uses: catalogbot/catalogbot@") {
			merger = s
		}
	}
	if !strings.Contains(merger, `merge: "true"`) {
		t.Fatalf("merge-on-approval.yml has no catalogbot step that merges:\n%s", merger)
	}
	if minted == "" || !strings.Contains(merger, "github-token: ${{ steps."+minted+".outputs.token }}") {
		t.Errorf("merge-on-approval.yml merges with GITHUB_TOKEN (no App token minted before the merge and passed as github-token), so publish-on-push.yml would never run after it:\n%s", merger)
	}
	if _, ok := ex["publish-on-push.yml"]; !ok || !strings.Contains(ex["publish-on-push.yml"], "\n  push:") {
		t.Error("publish-on-push.yml does not run on push")
	}
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	snippet := regexp.MustCompile("(?s)```yaml\n(on: pull_request.*?)```").FindSubmatch(readme)
	if snippet == nil {
		t.Fatal("README.md has no Action snippet")
	}
	ex["README.md"] = string(snippet[1])
	for name, wf := range ex {
		for _, s := range steps(wf) {
			if strings.Contains(s, "outputs.") && strings.Contains(s, "echo") && !strings.Contains(s, "if: always()") {
				t.Errorf("%s: a step printing catalogbot's outputs does not run when catalogbot failed (if: always()):\n%s", name, s)
			}
		}
	}
}
