package gitcache

import (
	"fmt"
	"sync"
	"testing"

	"github.com/catalogbot/catalogbot/bot/internal/gittest"
	"github.com/catalogbot/catalogbot/gitrepo"
)

// Workers check pull requests of one repository at once: each opens the App's clone, writes the merge of
// the head into the tip (the same commit, written again by every worker) and checks it out. A checkout
// never fails because another handle is writing objects meanwhile (the burst's "Infrastructure failure in
// setup: checkout <merge>: blob .catalogbot.yaml: object not found", which go-git's own object reading
// gave under load, one run in two of this test).
func TestConcurrentMergesAndCheckouts(t *testing.T) {
	remote := gittest.New(t)
	files := map[string]string{".catalogbot.yaml": "x: 1\n"}
	for i := range 60 {
		files[fmt.Sprintf("catalog/p%d/catalog.json", i)] = fmt.Sprintf(`{"schema":"olm.package","name":"p%d"}`, i)
	}
	base := remote.Commit("main", "", "admin", "base", files)
	head := remote.Commit("pr", base, "alice", "change", map[string]string{"catalog/p1/catalog.json": `{"x":1}`})
	remote.SetPull(1, head)
	c := &Cache{Dir: t.TempDir(), URL: func(string, string) string { return remote.Dir }}
	ctx := t.Context()
	dir, err := c.Fetch(ctx, "octo", "catalog", "", []string{head, base}, 1)
	if err != nil {
		t.Fatal(err)
	}
	var merges sync.Mutex // merges are written one at a time, as the bot's workers of a repository do
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 40 {
				r, err := gitrepo.Open(dir)
				if err != nil {
					t.Error(err)
					return
				}
				tip, err := r.Resolve(base)
				if err != nil {
					t.Error(err)
					return
				}
				hc, err := r.Resolve(head)
				if err != nil {
					t.Error(err)
					return
				}
				merges.Lock()
				m, err := r.Merge(ctx, tip, hc)
				merges.Unlock()
				if err != nil {
					t.Error(err)
					return
				}
				_, done, err := r.Checkout(ctx, m.Commit)
				if err != nil {
					t.Errorf("worker %d, checkout %d of the merge: %v", g, i, err)
					return
				}
				done()
			}
		})
	}
	wg.Wait()
}
