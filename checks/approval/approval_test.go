package approval

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// lookup is a hand-written Lookup: teams as "org/team" -> members, permissions by login.
type lookup struct {
	teams map[string][]string
	perms map[string]string
	calls []string
	fail  error
}

func (l *lookup) IsMember(_ context.Context, org, team, login string) (bool, error) {
	l.calls = append(l.calls, "team "+org+"/"+team+" "+login)
	if l.fail != nil {
		return false, l.fail
	}
	for _, m := range l.teams[org+"/"+team] {
		if m == login {
			return true, nil
		}
	}
	return false, nil
}

func (l *lookup) Permission(_ context.Context, login string) (string, error) {
	l.calls = append(l.calls, "perm "+login)
	if l.fail != nil {
		return "", l.fail
	}
	if p, ok := l.perms[login]; ok {
		return p, nil
	}
	return "none", nil
}

const (
	head = "2222222222222222222222222222222222222222"
	old  = "1111111111111111111111111111111111111111"
)

func TestEvaluate(t *testing.T) {
	policy := Policy{Maintainers: []string{"Admin", "octo/catalog-maintainers"},
		PackageOwners: map[string][]string{"foo": {"alice", "octo/foo-team"}}}
	twoPkgs := Policy{Maintainers: []string{"admin"},
		PackageOwners: map[string][]string{"foo": {"alice", "carol"}, "bar": {"bob", "Carol"}}}
	teams := map[string][]string{"octo/catalog-maintainers": {"mona"}, "octo/foo-team": {"fred"}}
	for _, tc := range []struct {
		name     string
		in       Input
		perms    map[string]string
		want     string // Current | Counted | Ineligible | Stale | CouldApprove
		wantCall string // lookups made, when it matters
	}{
		{
			name: "an owner's review on the head counts",
			in:   Input{Head: head, Author: "mallory", Policy: policy, Reviews: []Review{{"alice", "APPROVED", head}}},
			want: "[alice] | [alice] | [] | [] | [Admin octo/catalog-maintainers alice octo/foo-team]",
		},
		{
			name: "a review on an earlier head is stale",
			in:   Input{Head: head, Author: "mallory", Policy: policy, Reviews: []Review{{"alice", "APPROVED", old}}},
			want: "[] | [] | [] | [{alice " + old + "}] | [Admin octo/catalog-maintainers alice octo/foo-team]",
		},
		{
			name: "an /approve on an earlier head is stale",
			in:   Input{Head: head, Author: "mallory", Policy: policy, Slash: []Slash{{"Admin", old}}},
			want: "[] | [] | [] | [{admin " + old + "}] | [Admin octo/catalog-maintainers alice octo/foo-team]",
		},
		{
			name: "an /approve on the head counts over an old review",
			in: Input{Head: head, Author: "mallory", Policy: policy, Reviews: []Review{{"alice", "APPROVED", old}},
				Slash: []Slash{{"alice", head}}},
			want: "[alice] | [alice] | [] | [] | [Admin octo/catalog-maintainers alice octo/foo-team]",
		},
		{
			name: "a review on the head counts over an old /approve",
			in: Input{Head: head, Author: "mallory", Policy: policy, Reviews: []Review{{"alice", "APPROVED", head}},
				Slash: []Slash{{"alice", old}}},
			want: "[alice] | [alice] | [] | [] | [Admin octo/catalog-maintainers alice octo/foo-team]",
		},
		{
			name: "a sock puppet's approval does not count",
			in:   Input{Head: head, Author: "mallory", Policy: policy, Reviews: []Review{{"mallory-alt", "APPROVED", head}}},
			want: "[mallory-alt] | [] | [mallory-alt] | [] | [Admin octo/catalog-maintainers alice octo/foo-team]",
		},
		{
			name: "the author's own approval never counts, nor is the author offered as approver",
			in: Input{Head: head, Author: "Alice", Policy: policy, Reviews: []Review{{"alice", "APPROVED", head}},
				Slash: []Slash{{"ALICE", head}}},
			want: "[] | [] | [] | [] | [Admin octo/catalog-maintainers octo/foo-team]", // nor is it offered,
		},
		{
			name: "later changes requested or dismissed withdraw, comments do not",
			in: Input{Head: head, Author: "mallory", Policy: policy, Reviews: []Review{
				{"alice", "APPROVED", head}, {"alice", "CHANGES_REQUESTED", head},
				{"admin", "APPROVED", head}, {"admin", "COMMENTED", head},
				{"fred", "APPROVED", head}, {"fred", "DISMISSED", head}}},
			want: "[admin] | [admin] | [] | [] | [Admin octo/catalog-maintainers alice octo/foo-team]",
		},
		{
			name: "team members count through the lookup",
			in: Input{Head: head, Author: "mallory", Policy: policy, Reviews: []Review{
				{"mona", "APPROVED", head}, {"fred", "APPROVED", head}, {"eve", "APPROVED", head}}},
			want: "[eve fred mona] | [fred mona] | [eve] | [] | [Admin octo/catalog-maintainers alice octo/foo-team]",
		},
		{
			name: "an owner of one of two changed packages does not count",
			in: Input{Head: head, Author: "mallory", Policy: twoPkgs, Reviews: []Review{
				{"alice", "APPROVED", head}, {"carol", "APPROVED", head}}},
			want: "[alice carol] | [carol] | [alice] | [] | [admin Carol]",
		},
		{
			name: "no package changed: only maintainers",
			in: Input{Head: head, Author: "mallory", Policy: Policy{Maintainers: []string{"admin"}},
				Reviews: []Review{{"alice", "APPROVED", head}, {"admin", "APPROVED", head}}},
			want: "[admin alice] | [admin] | [alice] | [] | [admin]",
		},
		{
			name: "write access counts when the policy says so",
			in: Input{Head: head, Author: "mallory", Policy: Policy{Maintainers: []string{"admin"}, WriteAccess: true},
				Reviews: []Review{{"writer", "APPROVED", head}, {"maint", "APPROVED", head}, {"triager", "APPROVED", head}}},
			perms:    map[string]string{"writer": "write", "maint": "maintain", "triager": "triage"},
			want:     "[maint triager writer] | [maint writer] | [triager] | [] | [admin " + WriteAccessText + "]",
			wantCall: "[perm maint perm triager perm writer]",
		},
		{
			name: "write access is not asked without the setting",
			in: Input{Head: head, Author: "mallory", Policy: Policy{Maintainers: []string{"admin"}},
				Reviews: []Review{{"writer", "APPROVED", head}}},
			perms:    map[string]string{"writer": "admin"},
			want:     "[writer] | [] | [writer] | [] | [admin]",
			wantCall: "[]",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lk := &lookup{teams: teams, perms: tc.perms}
			res, err := Evaluate(context.Background(), tc.in, lk)
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprintf("%v | %v | %v | %v | %v", orEmpty(res.Current), orEmpty(res.Counted), orEmpty(res.Ineligible),
				fmtStale(res.Stale), res.CouldApprove)
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			if tc.wantCall != "" && fmt.Sprint(orEmpty(lk.calls)) != tc.wantCall {
				t.Errorf("lookups %v, want %s", lk.calls, tc.wantCall)
			}
		})
	}
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func fmtStale(s []Stale) string {
	var parts []string
	for _, x := range s {
		parts = append(parts, "{"+x.User+" "+x.SHA+"}")
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func TestEvaluateLookupFails(t *testing.T) {
	boom := errors.New("boom")
	in := Input{Head: head, Author: "mallory", Policy: Policy{Maintainers: []string{"octo/team"}},
		Reviews: []Review{{"bob", "APPROVED", head}}}
	if _, err := Evaluate(context.Background(), in, &lookup{fail: boom}); !errors.Is(err, boom) || !strings.Contains(err.Error(), "bob") {
		t.Errorf("err = %v, want one naming bob and wrapping the lookup's", err)
	}
	in.Policy = Policy{WriteAccess: true}
	if _, err := Evaluate(context.Background(), in, nil); err == nil {
		t.Error("write access without a lookup: no error")
	}
}

func TestMayApprove(t *testing.T) {
	p := Policy{Maintainers: []string{"admin"}, PackageOwners: map[string][]string{"foo": {"alice"}}}
	for login, want := range map[string]bool{"ADMIN": true, "alice": true, "bob": false} {
		if got, err := MayApprove(context.Background(), p, login, nil); err != nil || got != want {
			t.Errorf("MayApprove(%s) = %v, %v; want %v", login, got, err, want)
		}
	}
}

func TestMayLiftHold(t *testing.T) {
	for _, tc := range []struct {
		user       string
		holders    []string
		privileged bool
		want       bool
	}{
		{"alice", []string{"alice"}, false, true},           // the author lifts her own hold
		{"Alice", []string{"alice", "alice"}, false, true},  // placed twice, still hers
		{"alice", []string{"admin"}, false, false},          // a maintainer's hold
		{"alice", []string{"alice", "admin"}, false, false}, // held by both
		{"alice", nil, false, false},                        // unknown origin: not hers
		{"admin", []string{"alice"}, true, true},            // a maintainer or owner lifts any
		{"admin", nil, true, true},                          //
		{"triager", []string{"triager"}, false, true},       // anyone lifts their own
		{"triager", []string{"someone-else"}, false, false}, //
	} {
		if got := MayLiftHold(tc.user, tc.holders, tc.privileged); got != tc.want {
			t.Errorf("MayLiftHold(%s, %v, %v) = %v, want %v", tc.user, tc.holders, tc.privileged, got, tc.want)
		}
	}
}

// /approve cancel withdraws its giver's approval, whether given by review or /approve; the author's
// cancel means nothing; someone who never approved is not listed.
func TestEvaluateCancelled(t *testing.T) {
	in := Input{Head: "h", Author: "alice",
		Reviews:   []Review{{User: "Admin", State: "APPROVED", CommitID: "h"}, {User: "carol", State: "APPROVED", CommitID: "h"}},
		Slash:     []Slash{{User: "bob", HeadSHA: "h"}},
		Cancelled: []string{"admin", "bob", "dave", "alice"},
		Policy:    Policy{Maintainers: []string{"admin", "bob", "carol"}}}
	res, err := Evaluate(context.Background(), in, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Counted, []string{"carol"}) || !slices.Equal(res.Withdrawn, []string{"admin", "bob"}) {
		t.Errorf("counted %v, withdrawn %v", res.Counted, res.Withdrawn)
	}
}

// Maintainers are the counted approvers who are maintainers (a login or a team member), not those who
// count as a changed package's owner or a writer.
func TestEvaluateMaintainers(t *testing.T) {
	pol := Policy{Maintainers: []string{"Admin", "octo/catalog-maintainers"}, PackageOwners: map[string][]string{"foo": {"alice"}}, WriteAccess: true}
	lk := &lookup{teams: map[string][]string{"octo/catalog-maintainers": {"mona"}}, perms: map[string]string{"wanda": "write"}}
	in := Input{Head: head, Author: "mallory", Policy: pol, Reviews: []Review{{"alice", "APPROVED", head}, {"admin", "APPROVED", head},
		{"mona", "APPROVED", head}, {"wanda", "APPROVED", head}, {"mallory", "APPROVED", head}}}
	res, err := Evaluate(context.Background(), in, lk)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Maintainers, []string{"admin", "mona"}) || len(res.Counted) != 4 {
		t.Errorf("maintainers %v, counted %v", res.Maintainers, res.Counted)
	}
}
