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
// earlier step of the job), for publish-on-push.yml to run after its merge, and release-on-push.yml opens
// its release pull requests with one, for pr-checks.yml to check them; and every step that prints
// catalogbot's outputs runs when catalogbot failed too (if: always()), in the examples and in the
// README's snippet.
func TestExampleWorkflowsChainAndPrintOnFailure(t *testing.T) {
	ex := examples(t)
	// What GITHUB_TOKEN does starts no workflow: the merge (publish-on-push.yml would not run after it)
	// and the release pull requests (pr-checks.yml would not check them) are made with an App's token.
	for name, input := range map[string]string{"merge-on-approval.yml": `merge: "true"`, "release-on-push.yml": `release: "true"`} {
		var minted, step string
		for _, s := range steps(ex[name]) {
			if strings.Contains(s, "uses: actions/create-github-app-token@") {
				minted = regexp.MustCompile(`id: ([\w-]+)`).FindStringSubmatch(s)[1]
			}
			if strings.Contains(s, "uses: catalogbot/catalogbot@") {
				step = s
			}
		}
		if !strings.Contains(step, input) {
			t.Fatalf("%s has no catalogbot step with %s:\n%s", name, input, step)
		}
		if minted == "" || !strings.Contains(step, "github-token: ${{ steps."+minted+".outputs.token }}") {
			t.Errorf("%s runs %s with GITHUB_TOKEN (no App token minted before it and passed as github-token), so no workflow would run after what it does:\n%s", name, input, step)
		}
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
