package bot

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/bot/internal/gittest"
)

// fixedLookup answers with fixed permissions and no team members.
type fixedLookup map[string]string

func (f fixedLookup) IsMember(ctx context.Context, org, team, login string) (bool, error) {
	return false, nil
}
func (f fixedLookup) Permission(ctx context.Context, login string) (string, error) {
	if p, ok := f[login]; ok {
		return p, nil
	}
	return "none", nil
}

// Who may approve, and who may lift a hold, under the tip's rules: maintainers; owners of every changed
// package (configuration and owners files); only maintainers when more than packages change; writers
// approve only under merge.approvers: write, and never lift holds.
func TestBaseRulesPolicy(t *testing.T) {
	// Changed files hold blobs of the package they are filed under (files belong to the packages their
	// blobs name).
	foo, bar := `{"schema": "olm.package", "name": "foo"}`, `{"schema": "olm.package", "name": "bar"}`
	const cfg = "apiVersion: catalogbot.dev/v1alpha1\nkind: Config\nmaintainers: [admin]\nownersFrom: OWNERS\nowners:\n  foo: [alice]\n  bar: [bob, carol]\n"
	for _, tc := range []struct {
		name   string
		config string
		change map[string]string
		policy string
		act    string // login:mayAct(approve)/mayAct(lift hold)
	}{
		{"one package", cfg, map[string]string{"catalog/foo/x.json": foo},
			"{[admin] map[foo:[alice dora]] false}", "alice:true/true dora:true/true bob:false/false wendy:false/false"},
		{"two packages", cfg, map[string]string{"catalog/foo/x.json": foo, "catalog/bar/x.json": bar},
			"{[admin] map[bar:[bob carol] foo:[alice dora]] false}", "alice:true/true bob:true/true wendy:false/false"},
		{"more than packages", cfg, map[string]string{"catalog/foo/x.json": foo, ".catalogbot.yaml": cfg + "# hi\n"},
			"{[admin] map[] false}", "admin:true/true alice:true/true wendy:false/false"},
		{"writers", cfg + "merge:\n  approvers: write\n", map[string]string{"catalog/foo/x.json": foo},
			"{[admin] map[foo:[alice dora]] true}", "wendy:true/false mallory:false/false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := gittest.New(t)
			tip := g.Commit("main", "", "admin", "base", map[string]string{".catalogbot.yaml": tc.config,
				"catalog/foo/OWNERS": "approvers:\n- dora\n", "catalog/bar/y.json": "{}"})
			head := g.Commit("pr", tip, "mallory", "change", tc.change)
			br, err := loadBaseRules(t.Context(), g.Dir, tip, head)
			if err != nil {
				t.Fatal(err)
			}
			pol, err := br.policy()
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprintf("{%v %v %v}", pol.Maintainers, pol.PackageOwners, pol.WriteAccess); got != tc.policy {
				t.Errorf("policy %s, want %s", got, tc.policy)
			}
			lk := fixedLookup{"wendy": "write"}
			var got string
			for _, l := range strings.Fields(tc.act) {
				login, _, _ := strings.Cut(l, ":")
				a, err := br.mayAct(t.Context(), login, lk, true)
				if err != nil {
					t.Fatal(err)
				}
				h, err := br.mayAct(t.Context(), login, lk, false)
				if err != nil {
					t.Fatal(err)
				}
				got += fmt.Sprintf(" %s:%v/%v", login, a, h)
			}
			if got[1:] != tc.act {
				t.Errorf("mayAct %s, want %s", got[1:], tc.act)
			}
		})
	}
}
