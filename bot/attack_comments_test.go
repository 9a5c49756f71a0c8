package bot

import (
	"strings"
	"testing"
	"time"
)

// Issue 33 item 5: commands are what a reader sees.

// A maintainer holds alice's pull request (one approval required). Then the maintainer answers alice,
// quoting or pasting her words, in which "/unhold" and "/approve" are lines of a tilde fence, of a
// four-backtick fence around a three-backtick one, of an indented block, lazy continuation lines of a
// quote, lines of a multi-line HTML comment and of a <details> block. A reader sees no command of the
// maintainer in any of them: the bot carries out none (no reaction, still held, unapproved). Before,
// every line starting with a slash outside ``` fences was a command: the first answer lifted the hold and
// approved with the maintainer's rights, and the pull request merged. The maintainer's own commands
// then merge it.
func TestAttackCommandsInPastedText(t *testing.T) {
	h := newHarness(t)
	h.gh.SetPermission(repoFull, "catalog-admin", "maintain")
	_, head := h.heldRelease(26, repoConfig+"  requiredApprovals: 1\n", "catalog-admin")
	if !h.hasHold(26) {
		t.Fatal("the maintainer's /hold put no label on")
	}
	pasted := []string{
		"Alice asked for this:\n\n~~~\n/unhold\n/approve\n~~~\n\nNot yet.",
		"Your log:\n\n````\n```\n/unhold\n/approve\n```\n````",
		"You wrote:\n\n    /unhold\n    /approve\n\nNo.",
		"> Please lift it\n/unhold\n/approve\n\nNot before the release.",
		"Noted.\n<!--\n/unhold\n/approve\n-->",
		"<details><summary>what alice asked</summary>\n\n/unhold\n/approve\n\n</details>\n\nLater.",
	}
	for _, body := range pasted {
		// Whatever the answer (200 "no command" now, 202 before): what counts is what the bot does.
		h.post("issue_comment", "", payload(t, "issue_comment/created.payload.json", h.newComment(26, "catalog-admin", body, time.Now())), testSecret)
		h.waitIdle()
		h.requireNotMerged(26, "a command pasted in "+strings.ReplaceAll(body, "\n", `\n`))
		if !h.hasHold(26) {
			t.Fatalf("the hold was lifted by a command pasted in %q", body)
		}
	}
	if r := reactions(h, 26); strings.Contains(r, "unhold") || strings.Contains(r, "approve") {
		t.Errorf("the bot reacted to pasted commands: %s", r)
	}
	if body := h.readiness(26); !strings.Contains(body, "0 of 1 required approvals") {
		t.Errorf("a pasted /approve counted:\n%s", body)
	}
	h.comment(26, "catalog-admin", "Now:\n/approve\n/unhold")
	h.waitIdle()
	h.requireMerged(26, head, "the maintainer's own /approve and /unhold")
}
