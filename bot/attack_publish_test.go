package bot

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/catalogbot/catalogbot/build"
	"github.com/catalogbot/catalogbot/internal/registrytest"
	"github.com/catalogbot/catalogbot/pipeline"
)

// Two pushes to main handled out of order (a backlog, a retry, another replica) must not leave the
// catalog tag on the older catalog: only the branch's tip is published, every image records its commit,
// and the tag never moves to an ancestor of the commit it holds (here: main force-pushed back).
func TestAttackLatePushMovesTagBackwards(t *testing.T) {
	h := newHarness(t)
	base := registrytest.PushBase(t, h.reg.Host)
	target := h.reg.Host + "/ops/catalog:latest"
	cfg := repoConfig + "publish:\n  image: " + target + "\n  base: " + base + "\n"
	main := h.seedMain(cfg)
	older := h.label(h.releaseFoo("main", main, "catalog-admin"), "OLDER")
	newer := h.label(h.git.Commit("main", "", "catalog-admin", "foo-operator v0.3.0",
		h.catalogFiles(map[string][]string{"foo-operator": {"0.1.0", "0.2.0", "0.3.0"}})), "NEWER")
	push := func(before, after string, forced bool) {
		h.deliver("push", "push/payload.json", repoEdits(map[string]any{"ref": "refs/heads/main", "before": before, "after": after,
			"deleted": false, "created": false, "forced": forced, "base_ref": nil, "repository.master_branch": "main"}))
		h.waitIdle()
	}
	revision := func() string {
		t.Helper()
		rev, found, err := pipeline.TagRevision(context.Background(), target, build.Options{})
		if err != nil || !found {
			t.Fatalf("revision of %s: %v (found %v)", target, err, found)
		}
		return rev
	}
	// The newer push is handled first, then the older one.
	push(older, newer, false)
	published := digestOf(t, target)
	if rev := revision(); rev != newer {
		t.Fatalf("%s records %s, want the newer push %s", target, rev, newer)
	}
	push(main, older, false)
	if got := digestOf(t, target); got != published {
		t.Fatalf("the late push of %s moved %s from %s to %s", older, target, published, got)
	}
	if rev := revision(); rev != newer {
		t.Fatalf("after the late push %s records %s, want %s", target, rev, newer)
	}
	if sts := h.gh.Statuses(repoFull, older); len(sts) != 0 {
		t.Errorf("the older commit got publish statuses %+v; only the tip is published", sts)
	}
	// main is force-pushed back to the older commit: its catalog is not published over the newer one.
	h.git.SetBranch("main", older)
	h.gh.SetRef(repoFull, "heads/main", older)
	push(newer, older, true)
	if got := digestOf(t, target); got != published {
		t.Fatalf("a force push back to %s moved %s to %s", older, target, got)
	}
	sts := h.gh.Statuses(repoFull, older)
	if len(sts) != 2 || sts[1].State != "failure" || !strings.Contains(sts[1].Description, "never moves backwards") {
		t.Fatalf("statuses of the force-pushed older commit: %+v", sts)
	}
}

// TestAttackPublishRaceOneTag: two pushes to main in quick succession and a replay of the first, with a
// second delivery ID, all delivered at once to a bot with four workers, race for one catalog tag. The
// later commit wins: the tag ends on an image built from it, whose digest its commit status names, and
// no push publishes anything else over it (publish jobs of a repository run one at a time, a newer one
// supersedes a queued older one, and a late job publishes the branch's tip, never an older commit).
func TestAttackPublishRaceOneTag(t *testing.T) {
	h := newHarness(t)
	base := registrytest.PushBase(t, h.reg.Host)
	target := h.reg.Host + "/ops/catalog:latest"
	cfg := repoConfig + "publish:\n  image: " + target + "\n  base: " + base + "\n"
	main := h.seedMain(cfg)
	older := h.label(h.releaseFoo("main", main, "catalog-admin"), "OLDER")
	newer := h.label(h.git.Commit("main", "", "catalog-admin", "foo-operator v0.3.0",
		h.catalogFiles(map[string][]string{"foo-operator": {"0.1.0", "0.2.0", "0.3.0"}})), "NEWER")
	h.gh.SetRef(repoFull, "heads/main", newer)
	push := func(before, after string) []byte {
		return payload(t, "push/payload.json", repoEdits(map[string]any{"ref": "refs/heads/main", "before": before, "after": after,
			"deleted": false, "created": false, "forced": false, "base_ref": nil, "repository.master_branch": "main"}))
	}
	var wg sync.WaitGroup
	for _, body := range [][]byte{push(main, older), push(older, newer), push(main, older)} {
		wg.Go(func() {
			if status, text := h.post("push", "", body, testSecret); status != http.StatusAccepted {
				t.Errorf("push delivery: %d %s", status, text)
			}
		})
	}
	wg.Wait()
	h.waitIdle()
	rev, found, err := pipeline.TagRevision(context.Background(), target, build.Options{})
	if err != nil || !found || rev != newer {
		t.Fatalf("%s records %q (found %v, %v), want the later commit %s", target, rev, found, err, newer)
	}
	sts := h.gh.Statuses(repoFull, newer)
	if len(sts) == 0 || sts[len(sts)-1].State != "success" {
		t.Fatalf("statuses of the later commit: %+v", sts)
	}
	// the later commit's status names the digest it pushed (a second job for it finds the tag unchanged)
	got, named := digestOf(t, target), false
	for _, st := range sts {
		named = named || st.State == "success" && st.Description == "pushed "+got
	}
	if !named {
		t.Errorf("%s is at %s; no status of the later commit says it was pushed: %+v", target, got, sts)
	}
	for _, st := range h.gh.Statuses(repoFull, older) {
		if st.State == "success" {
			t.Errorf("the older commit was published too: %+v", st)
		}
	}
}
