package bot

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/gitrepo"
)

// A pull request whose tree nests directories deeper than git allows (core.maxTreeDepth) is refused as
// its content's fault at the first walk of the change, before go-git's tree diff or a checkout pays the
// square of its depth: the check fails at once (no retry as an infrastructure failure), naming the limit,
// and a maintainer's approving review does not merge it.
func TestAttackTreeDeeperThanGitAllows(t *testing.T) {
	h := newHarness(t)
	main := h.seedMain(repoConfig + "  requiredApprovals: 1\n")
	// git fast-import writes the whole tree in one process (git before 2.44 has no depth limit of its own).
	deep := strings.Repeat("a/", gitrepo.MaxTreeDepth+1) + "f"
	cmd := exec.Command("git", "-C", h.git.Dir, "fast-import", "--quiet")
	cmd.Stdin = strings.NewReader(fmt.Sprintf("commit refs/heads/alice/deep\ncommitter alice <alice@example.test> 1767268800 +0000\n"+
		"data 4\ndeep\nfrom %s\nM 100644 inline %s\ndata 2\nx\n\n", main, deep))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git fast-import: %v\n%s", err, out)
	}
	head := h.git.Git("rev-parse", "refs/heads/alice/deep")
	h.openPR(33, "alice", head, main)
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(33, "alice", head, main, nil))
	h.waitIdle()
	cr := h.lastCheckRun()
	if cr.HeadSHA != head || cr.Conclusion != "failure" || !strings.Contains(cr.Output.Title+cr.Output.Summary+cr.Output.Text, "core.maxTreeDepth") {
		t.Fatalf("check run of the deep tree: %s %q\n%s\n%s", cr.Conclusion, cr.Output.Title, cr.Output.Summary, cr.Output.Text)
	}
	h.review(33, "alice", head, main, "catalog-admin", "APPROVED", head)
	h.waitIdle()
	h.requireNotMerged(33, "a tree deeper than git allows merged")
}
