package owners

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
)

// fakeMembers is a hand-written Membership: team "org/team" -> member logins (lowercase, as Decide asks).
type fakeMembers struct {
	teams map[string][]string
	err   error
	calls map[string]int
}

func (f *fakeMembers) IsMember(ctx context.Context, org, team, login string) (bool, error) {
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[org+"/"+team+" "+login]++
	if f.err != nil {
		return false, f.err
	}
	return slices.Contains(f.teams[org+"/"+team], login), nil
}

func testConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg, ds, err := config.ParseConfig(config.ConfigFile, []byte(`apiVersion: catalogbot.dev/v1alpha1
kind: Config
maintainers: [Alice, Org/Catalog-Admins]
owners:
  etcd: [bob, org/etcd-team]
  kube-green: [carol]
ownersFrom: operators/{package}/ci.yaml
`))
	if err != nil {
		t.Fatalf("%v: %v", err, ds)
	}
	return cfg
}

var testOwnersFiles = map[string][]string{"etcd": {"Dave"}, "aqua": {"guyyakir"}}

func teams() *fakeMembers {
	return &fakeMembers{teams: map[string][]string{"org/catalog-admins": {"erin"}, "org/etcd-team": {"frank"}}}
}

func pkgs(names ...string) map[string]PackageChange {
	m := map[string]PackageChange{}
	for _, n := range names {
		m[n] = PackageChange{Files: []string{"catalog/" + n + "/catalog.json"}}
	}
	return m
}

func TestDecide(t *testing.T) {
	everything := Change{
		Packages:         pkgs("etcd", "kube-green", "newpkg"),
		Paths:            []string{"README.md", "operators/etcd/ci.yaml", config.ConfigFile},
		NewPackages:      []string{"newpkg"},
		ConfigChanged:    true,
		ReferenceEntries: []string{"aqua"},
	}
	maintainersOnly := []string{"Alice", "Org/Catalog-Admins"}
	for _, tc := range []struct {
		name      string
		noReviews bool // approvals.ownerReviewSatisfies: false
		noMembers bool // nil Membership
		ch        Change
		author    string
		approvers []string
		denied    []string            // subjects, in order
		could     map[string][]string // subject -> CouldApprove
		rules     []string            // diagnostic rules, sorted as Decide returns them
	}{
		{name: "maintainer changes everything", ch: everything, author: "alice"},
		{name: "maintainer login is case-insensitive", ch: everything, author: "ALICE"},
		{name: "maintainer through a team", ch: everything, author: "Erin"},
		{name: "owner changes own package", ch: Change{Packages: pkgs("etcd")}, author: "bob"},
		{name: "owner login is case-insensitive", ch: Change{Packages: pkgs("etcd")}, author: "BoB"},
		{name: "owner through a team", ch: Change{Packages: pkgs("etcd")}, author: "frank"},
		{name: "owner from the owners file, case-insensitive", ch: Change{Packages: pkgs("etcd")}, author: "dave"},
		{name: "owner from the owners file only", ch: Change{ReferenceEntries: []string{"aqua"}}, author: "guyyakir"},
		{name: "owner's reference entry", ch: Change{ReferenceEntries: []string{"etcd"}}, author: "bob"},
		{name: "team member without Membership", noMembers: true, ch: Change{Packages: pkgs("etcd")}, author: "frank",
			denied: []string{"etcd"}, rules: []string{"owners-not-owner"}},
		{name: "owner touches another package", ch: Change{Packages: pkgs("etcd", "kube-green")}, author: "bob",
			denied: []string{"kube-green"}, could: map[string][]string{"kube-green": {"carol", "Alice", "Org/Catalog-Admins"}},
			rules: []string{"owners-not-owner"}},
		{name: "another package's reference entry", ch: Change{ReferenceEntries: []string{"kube-green"}}, author: "bob",
			denied: []string{"kube-green"}, rules: []string{"owners-not-owner"}},
		{name: "new package needs a maintainer", ch: Change{Packages: pkgs("newpkg"), NewPackages: []string{"newpkg"}, ReferenceEntries: []string{"newpkg"}}, author: "bob",
			denied: []string{"newpkg"}, could: map[string][]string{"newpkg": maintainersOnly}, rules: []string{"owners-new-package"}},
		{name: "new package listed in owners still needs a maintainer", ch: Change{NewPackages: []string{"etcd"}}, author: "bob",
			denied: []string{"etcd"}, could: map[string][]string{"etcd": maintainersOnly}, rules: []string{"owners-new-package"}},
		{name: "config change flag", ch: Change{ConfigChanged: true}, author: "bob",
			denied: []string{config.ConfigFile}, could: map[string][]string{config.ConfigFile: maintainersOnly}, rules: []string{"owners-config-change"}},
		{name: "config change path, reported once", ch: Change{ConfigChanged: true, Paths: []string{config.ConfigFile}}, author: "bob",
			denied: []string{config.ConfigFile}, rules: []string{"owners-config-change"}},
		{name: "owners file under ownersFrom", ch: Change{Paths: []string{"operators/etcd/ci.yaml"}}, author: "bob",
			denied: []string{"operators/etcd/ci.yaml"}, could: map[string][]string{"operators/etcd/ci.yaml": maintainersOnly}, rules: []string{"owners-owners-file"}},
		{name: "owners file inside the package's files", author: "bob",
			ch:     Change{Packages: map[string]PackageChange{"etcd": {Files: []string{"catalog/etcd/catalog.json", "catalog/etcd/OWNERS"}}}},
			denied: []string{"catalog/etcd/OWNERS"}, rules: []string{"owners-owners-file"}},
		{name: "owners file elsewhere", ch: Change{Paths: []string{"docs/OWNERS"}}, author: "bob",
			denied: []string{"docs/OWNERS"}, rules: []string{"owners-owners-file"}},
		{name: "path outside any package", ch: Change{Paths: []string{"README.md"}}, author: "bob",
			denied: []string{"README.md"}, rules: []string{"owners-outside-package"}},
		{name: "owner review permits a stranger's change", ch: Change{Packages: pkgs("etcd")}, author: "mallory", approvers: []string{"BOB"}},
		{name: "owner review through a team", ch: Change{Packages: pkgs("etcd")}, author: "mallory", approvers: []string{"frank"}},
		{name: "owner-file owner's review", ch: Change{Packages: pkgs("etcd")}, author: "mallory", approvers: []string{"dave"}},
		{name: "maintainer review permits everything", ch: everything, author: "mallory", approvers: []string{"carol", "erin"}},
		{name: "another package's owner's review does not count", ch: Change{Packages: pkgs("etcd")}, author: "mallory", approvers: []string{"carol"},
			denied: []string{"etcd"}, could: map[string][]string{"etcd": {"bob", "org/etcd-team", "Dave", "Alice", "Org/Catalog-Admins"}},
			rules: []string{"owners-not-owner"}},
		{name: "owner review does not permit a config change", ch: Change{ConfigChanged: true}, author: "mallory", approvers: []string{"bob"},
			denied: []string{config.ConfigFile}, rules: []string{"owners-config-change"}},
		{name: "reviews do not count when disabled", noReviews: true, ch: Change{Packages: pkgs("etcd")}, author: "mallory", approvers: []string{"bob", "alice"},
			denied: []string{"etcd"}, rules: []string{"owners-not-owner"}},
		{name: "the author's own approval is not a review", ch: Change{Packages: pkgs("kube-green")}, author: "bob", approvers: []string{"bob"},
			denied: []string{"kube-green"}, rules: []string{"owners-not-owner"}},
		{name: "stranger touches everything", ch: everything, author: "mallory",
			denied: []string{config.ConfigFile, "newpkg", "etcd", "kube-green", "aqua", "README.md", "operators/etcd/ci.yaml"},
			could:  map[string][]string{"aqua": {"guyyakir", "Alice", "Org/Catalog-Admins"}},
			rules: []string{"owners-config-change", "owners-outside-package", "owners-not-owner", "owners-not-owner",
				"owners-owners-file", "owners-not-owner", "owners-new-package"}}, // diagnostics sort by file first
		{name: "nothing touched", ch: Change{}, author: "mallory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t)
			cfg.Approvals.OwnerReviewSatisfies = !tc.noReviews
			var members Membership = teams()
			if tc.noMembers {
				members = nil
			}
			dec, err := Decide(context.Background(), cfg, testOwnersFiles, tc.ch, tc.author, tc.approvers, members)
			if err != nil {
				t.Fatal(err)
			}
			var subjects, rules []string
			for _, d := range dec.Denied {
				subjects = append(subjects, d.Subject)
				if d.Reason == "" || !strings.Contains(d.Reason, d.Subject) {
					t.Errorf("denial of %s: reason %q does not name it", d.Subject, d.Reason)
				}
				if want, ok := tc.could[d.Subject]; ok && !slices.Equal(d.CouldApprove, want) {
					t.Errorf("%s: could approve %q, want %q", d.Subject, d.CouldApprove, want)
				}
			}
			for _, d := range dec.Diagnostics {
				rules = append(rules, d.Rule)
				if d.Severity != diag.Error || d.Check != "owners" || d.Hint == "" {
					t.Errorf("diagnostic %+v", d)
				}
			}
			if dec.Allowed != (len(tc.denied) == 0) || !slices.Equal(subjects, tc.denied) || !slices.Equal(rules, tc.rules) {
				t.Errorf("allowed=%v denied=%q rules=%q, want denied=%q rules=%q\n%v", dec.Allowed, subjects, rules, tc.denied, tc.rules, dec.Diagnostics)
			}
		})
	}
}

func TestDecideHints(t *testing.T) {
	cfg := testConfig(t)
	dec, err := Decide(context.Background(), cfg, nil, Change{Packages: pkgs("etcd")}, "mallory", nil, teams())
	if err != nil || len(dec.Diagnostics) != 1 {
		t.Fatalf("err=%v diagnostics=%v", err, dec.Diagnostics)
	}
	d := dec.Diagnostics[0]
	want := diag.Diagnostic{Severity: diag.Error, Check: "owners", Rule: "owners-not-owner", File: "catalog/etcd/catalog.json", Package: "etcd",
		Message: "mallory is not an owner of package etcd",
		Hint:    "an approving review by one of these permits it: bob, org/etcd-team, Alice, Org/Catalog-Admins"}
	if d != want {
		t.Errorf("got  %+v\nwant %+v", d, want)
	}

	cfg.Approvals.OwnerReviewSatisfies = false
	dec, _ = Decide(context.Background(), cfg, nil, Change{Packages: pkgs("etcd")}, "mallory", nil, teams())
	if h := dec.Diagnostics[0].Hint; !strings.Contains(h, "ownerReviewSatisfies is false") {
		t.Errorf("hint %q does not say reviews do not count", h)
	}

	cfg.Maintainers = nil
	dec, _ = Decide(context.Background(), cfg, nil, Change{Paths: []string{"Makefile"}}, "mallory", nil, teams())
	if d := dec.Denied[0]; len(d.CouldApprove) != 0 || !strings.Contains(dec.Diagnostics[0].Hint, "nobody may change Makefile") {
		t.Errorf("no maintainers: %+v %+v", d, dec.Diagnostics[0])
	}
}

func TestDecideMembershipLookups(t *testing.T) {
	cfg := testConfig(t)
	m := teams()
	ch := Change{Packages: pkgs("etcd", "kube-green"), ReferenceEntries: []string{"etcd", "kube-green"}, Paths: []string{"a", "b", "c"}}
	if _, err := Decide(context.Background(), cfg, nil, ch, "Mallory", []string{"Zed"}, m); err != nil {
		t.Fatal(err)
	}
	// Each (team, login) is asked once, lowercased, however many subjects need it.
	want := map[string]int{"org/catalog-admins mallory": 1, "org/etcd-team mallory": 1, "org/catalog-admins zed": 1, "org/etcd-team zed": 1}
	if fmt.Sprint(m.calls) != fmt.Sprint(want) {
		t.Errorf("lookups %v, want %v", m.calls, want)
	}
	// A direct owner needs no lookup at all.
	m = teams()
	if _, err := Decide(context.Background(), cfg, nil, Change{Packages: pkgs("etcd")}, "bob", nil, m); err != nil || len(m.calls) != 0 {
		t.Errorf("err=%v lookups=%v", err, m.calls)
	}
}

func TestDecideErrors(t *testing.T) {
	cfg := testConfig(t)
	boom := errors.New("GitHub API: 502 Bad Gateway")
	_, err := Decide(context.Background(), cfg, nil, Change{Packages: pkgs("etcd")}, "mallory", nil, &fakeMembers{err: boom})
	if !errors.Is(err, boom) || diag.CategoryOf(err) != diag.Infra || !strings.Contains(err.Error(), "org/etcd-team") {
		t.Errorf("membership failure: %v (category %s)", err, diag.CategoryOf(err))
	}
	usage := diag.UsageError(errors.New("no token"))
	if _, err := Decide(context.Background(), cfg, nil, Change{Packages: pkgs("etcd")}, "mallory", nil, &fakeMembers{err: usage}); diag.CategoryOf(err) != diag.Usage {
		t.Errorf("a categorized membership error lost its category: %v", err)
	}
	for _, author := range []string{"", "not a login", "org/team"} {
		if _, err := Decide(context.Background(), cfg, nil, Change{}, author, nil, nil); diag.CategoryOf(err) != diag.Usage {
			t.Errorf("author %q: err=%v, want a usage error", author, err)
		}
	}
	if _, err := Decide(context.Background(), nil, nil, Change{}, "bob", nil, nil); err == nil {
		t.Error("nil config accepted")
	}
	dec, err := Decide(context.Background(), cfg, map[string][]string{"etcd": {"not a login"}}, Change{}, "bob", nil, nil)
	if err != nil || len(dec.Diagnostics) != 1 || dec.Diagnostics[0].Rule != "owners-file-bad-entry" || dec.Diagnostics[0].Severity != diag.Warning || !dec.Allowed {
		t.Errorf("bad owners-file entry: err=%v %+v", err, dec)
	}
}

// An owners file whose owners the change keeps (OwnersKept, decided by the caller from the base and head
// revisions) is package content: its package's owner may change it. Without the mark it needs a
// maintainer, whoever the owner is.
func TestOwnersKeptFileIsPackageContent(t *testing.T) {
	cfg := testConfig(t)
	file := "operators/etcd/ci.yaml"
	for _, tc := range []struct {
		kept, allowed bool
	}{{true, true}, {false, false}} {
		ch := Change{Packages: map[string]PackageChange{"etcd": {Files: []string{file, "operators/etcd/catalog-templates/basic.yaml"}}}}
		if tc.kept {
			ch.OwnersKept = map[string]bool{file: true}
		}
		dec, err := Decide(context.Background(), cfg, testOwnersFiles, ch, "dave", nil, teams())
		if err != nil {
			t.Fatal(err)
		}
		if dec.Allowed != tc.allowed {
			t.Errorf("kept %v: allowed %v, want %v: %+v", tc.kept, dec.Allowed, tc.allowed, dec.Denied)
		}
		if !tc.kept && (len(dec.Denied) != 1 || dec.Denied[0].Subject != file) {
			t.Errorf("kept false: denied %+v, want only %s", dec.Denied, file)
		}
	}
}
