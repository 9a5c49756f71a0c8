package gitcache

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/catalogbot/catalogbot/bot/internal/gittest"
	"github.com/catalogbot/catalogbot/gitrepo"
)

func TestFetchResolveAndDiff(t *testing.T) {
	remote := gittest.New(t)
	base := remote.Commit("main", "", "admin", "base", map[string]string{
		"catalog/a/catalog.json": "{}", "catalog/b/catalog.json": "{}", ".catalogbot.yaml": "x: 1\n"})
	head := remote.Commit("pr", base, "alice", "change a", map[string]string{"catalog/a/catalog.json": `{"x":1}`})
	moved := remote.Commit("main", base, "admin", "change b and config", map[string]string{
		"catalog/b/catalog.json": `{"y":1}`, ".catalogbot.yaml": "x: 2\n"})
	remote.SetPull(7, head)

	c := &Cache{Dir: t.TempDir(), URL: func(owner, name string) string { return remote.Dir }}
	ctx := t.Context()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs { // concurrent fetches of one repository serialize
		wg.Go(func() { _, errs[i] = c.Fetch(ctx, "Octo", "Catalog", "", nil, 7) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	dir, err := c.Fetch(ctx, "octo", "catalog", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	repo, err := gitrepo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for rev, want := range map[string]string{PullRef(7): head, BranchRef("main"): moved, base: base} {
		if got, err := repo.SHA(rev); err != nil || got != want {
			t.Errorf("Resolve(%s) = %s, %v; want %s", rev, got, err, want)
		}
	}
	if d, ok := c.Has("octo", "catalog", head, moved); !ok || d != dir {
		t.Errorf("Has(head, moved) = %s, %v", d, ok)
	}
	if _, ok := c.Has("octo", "catalog", strings.Repeat("1", 40)); ok {
		t.Error("Has reports a commit that is not there")
	}
	if _, err := repo.SHA(PullRef(8)); err == nil {
		t.Error("an unfetched pull request resolved")
	}
	if mb, err := repo.MergeBase(moved, head); err != nil || mb != base {
		t.Errorf("merge base = %s, %v; want %s", mb, err, base)
	}
	dirs, outside, err := repo.TouchedTopDirs(ctx, base, moved, "catalog")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for d := range dirs {
		got = append(got, d)
	}
	sort.Strings(got)
	if fmt.Sprint(got) != "[b]" || fmt.Sprint(outside) != "[.catalogbot.yaml]" {
		t.Errorf("touched %v outside %v", got, outside)
	}
	// A changed remote URL is followed.
	other := gittest.New(t)
	otherHead := other.Commit("main", "", "x", "other", map[string]string{"f": "1"})
	c.URL = func(string, string) string { return other.Dir }
	if _, err := c.Fetch(ctx, "octo", "catalog", "token-not-needed-locally", nil); err != nil {
		t.Fatal(err)
	}
	if repo, err = gitrepo.Open(dir); err != nil { // reopened: go-git caches packs
		t.Fatal(err)
	}
	if got, _ := repo.SHA(BranchRef("main")); got != otherHead {
		t.Errorf("main after the URL change = %s, want %s", got, otherHead)
	}
}

func TestFetchFailureIsInfrastructure(t *testing.T) {
	c := &Cache{Dir: t.TempDir(), URL: func(string, string) string { return "/nonexistent/repo" }}
	if _, err := c.Fetch(t.Context(), "o", "r", "", nil); err == nil {
		t.Fatal("fetch from a missing remote succeeded")
	}
}
