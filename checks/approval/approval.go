// Package approval decides whose approvals of a pull request count: an approval counts only for the head
// commit it was given on, only when its giver may approve (a maintainer, an owner of every changed
// package, or, when the repository says so, anyone with write access), and never the author's. It also
// decides who may lift a hold. It knows nothing of GitHub: the bot gathers reviews, /approve and
// /approve cancel commands and lookups, the Action reviews and lookups; both call Evaluate and hand its
// Result to the one merge decision, checks/merge.
package approval

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// Review is a pull request review: its author, state (APPROVED, CHANGES_REQUESTED, DISMISSED,
// COMMENTED, PENDING) and the commit it was given on. Reviews come oldest first.
type Review struct {
	User, State, CommitID string
}

// Slash is an `/approve` command accepted on the head HeadSHA.
type Slash struct {
	User, HeadSHA string
}

// Policy says who may approve: Maintainers (logins or org/team slugs, as configured), the owners of each
// changed package (package -> logins or org/team slugs, from the configuration and owners files), and
// with WriteAccess anyone whose repository permission is write, maintain or admin.
type Policy struct {
	Maintainers   []string
	PackageOwners map[string][]string
	WriteAccess   bool
}

// Lookup answers the questions Evaluate cannot answer from its input. IsMember gets org, team and login
// lowercased; Permission returns a repository permission (admin, maintain, write, triage, read, none).
type Lookup interface {
	IsMember(ctx context.Context, org, team, login string) (bool, error)
	Permission(ctx context.Context, login string) (string, error)
}

// Input is what Evaluate weighs.
type Input struct {
	Head, Author string
	Reviews      []Review
	Slash        []Slash
	// Cancelled are the logins whose approval is withdrawn: their /approve cancel came after their last
	// approval (review or /approve). Neither their reviews nor their /approve count.
	Cancelled []string
	Policy    Policy
}

// Stale is an approval given on an earlier head: a push dropped it.
type Stale struct {
	User, SHA string
}

// Result says whose approvals count.
type Result struct {
	// Current are the logins (lowercased, sorted) whose approval was given on the head, the author's
	// excepted, whoever they are: the owners stage weighs each against what it permits.
	Current []string
	// Counted are those of Current who may approve: they count toward merge.requiredApprovals.
	Counted []string
	// Maintainers are those of Counted who are maintainers (Policy.Maintainers), not only owners of the
	// changed packages or writers: a promotion a package's strategy says needs review waits for one.
	Maintainers []string
	// Ineligible are those of Current who may not approve.
	Ineligible []string
	// Stale are approvals given on another commit than the head (sorted by login).
	Stale []Stale
	// Withdrawn are the logins (lowercased, sorted) whose approval Cancelled withdrew.
	Withdrawn []string
	// CouldApprove names who may approve, as configured (maintainers, then entries owning every changed
	// package), then "anyone with write access" under WriteAccess; never the author.
	CouldApprove []string
}

// WriteAccessText is how CouldApprove names users with write access.
const WriteAccessText = "anyone with write access to the repository"

// Evaluate decides whose approvals count. A user's latest APPROVED, CHANGES_REQUESTED or DISMISSED review
// decides; an /approve on the head counts whatever earlier reviews said (the front-end drops an /approve
// that a later changes-requested or dismissed review withdrew); a login in Cancelled counts nothing. An
// error is a failed lookup.
func Evaluate(ctx context.Context, in Input, lk Lookup) (Result, error) {
	author := strings.ToLower(in.Author)
	type state struct {
		approved bool
		sha      string
	}
	latest := map[string]state{}
	for _, rv := range in.Reviews {
		u := strings.ToLower(rv.User)
		switch rv.State {
		case "APPROVED":
			latest[u] = state{true, rv.CommitID}
		case "CHANGES_REQUESTED", "DISMISSED":
			latest[u] = state{}
		}
	}
	for _, s := range in.Slash {
		u := strings.ToLower(s.User)
		if st := latest[u]; !st.approved || st.sha != in.Head {
			latest[u] = state{true, s.HeadSHA}
		}
	}
	delete(latest, author)
	var res Result
	for _, c := range in.Cancelled {
		u := strings.ToLower(c)
		if st, ok := latest[u]; ok && st.approved && !slices.Contains(res.Withdrawn, u) {
			res.Withdrawn = append(res.Withdrawn, u)
		}
		delete(latest, u)
	}
	sort.Strings(res.Withdrawn)
	for u, st := range latest {
		switch {
		case !st.approved || u == "":
		case st.sha != in.Head:
			res.Stale = append(res.Stale, Stale{User: u, SHA: st.sha})
		default:
			res.Current = append(res.Current, u)
		}
	}
	sort.Strings(res.Current)
	sort.Slice(res.Stale, func(i, j int) bool { return res.Stale[i].User < res.Stale[j].User })
	m := &matcher{lk: lk, members: map[string]bool{}}
	for _, u := range res.Current {
		ok, err := m.mayApprove(ctx, in.Policy, u)
		if err != nil {
			return Result{}, err
		}
		if ok {
			res.Counted = append(res.Counted, u)
			if maint, err := m.any(ctx, in.Policy.Maintainers, u); err != nil {
				return Result{}, err
			} else if maint {
				res.Maintainers = append(res.Maintainers, u)
			}
		} else {
			res.Ineligible = append(res.Ineligible, u)
		}
	}
	// The author's approval never counts: do not offer it.
	res.CouldApprove = slices.DeleteFunc(couldApprove(in.Policy), func(e string) bool { return strings.EqualFold(e, author) })
	return res, nil
}

// MayApprove reports whether login may approve under p.
func MayApprove(ctx context.Context, p Policy, login string, lk Lookup) (bool, error) {
	m := &matcher{lk: lk, members: map[string]bool{}}
	return m.mayApprove(ctx, p, strings.ToLower(login))
}

type matcher struct {
	lk      Lookup
	members map[string]bool
}

func (m *matcher) mayApprove(ctx context.Context, p Policy, login string) (bool, error) {
	if ok, err := m.any(ctx, p.Maintainers, login); ok || err != nil {
		return ok, err
	}
	if len(p.PackageOwners) > 0 {
		all := true
		for _, pkg := range slices.Sorted(maps.Keys(p.PackageOwners)) {
			ok, err := m.any(ctx, p.PackageOwners[pkg], login)
			if err != nil {
				return false, err
			}
			if !ok {
				all = false
				break
			}
		}
		if all {
			return true, nil
		}
	}
	if p.WriteAccess {
		if m.lk == nil {
			return false, fmt.Errorf("approval: is %s allowed to write: no permission lookup", login)
		}
		perm, err := m.lk.Permission(ctx, login)
		if err != nil {
			return false, fmt.Errorf("approval: permission of %s: %w", login, err)
		}
		switch perm {
		case "admin", "maintain", "write":
			return true, nil
		}
	}
	return false, nil
}

// any reports whether login is one of entries: a login (case-insensitive) or a member of an org/team.
func (m *matcher) any(ctx context.Context, entries []string, login string) (bool, error) {
	for _, e := range entries {
		if !strings.Contains(e, "/") && strings.EqualFold(strings.TrimPrefix(e, "@"), login) {
			return true, nil
		}
	}
	for _, e := range entries {
		org, team, isTeam := strings.Cut(e, "/")
		if !isTeam {
			continue
		}
		if m.lk == nil {
			continue // no lookup: teams have no members
		}
		k := strings.ToLower(e) + "\x00" + login
		member, ok := m.members[k]
		if !ok {
			var err error
			if member, err = m.lk.IsMember(ctx, strings.ToLower(org), strings.ToLower(team), login); err != nil {
				return false, fmt.Errorf("approval: is %s a member of team %s: %w", login, e, err)
			}
			m.members[k] = member
		}
		if member {
			return true, nil
		}
	}
	return false, nil
}

// couldApprove lists maintainers, then entries that own every changed package, then write access.
func couldApprove(p Policy) []string {
	var out []string
	seen := map[string]bool{}
	add := func(e string) {
		if k := strings.ToLower(e); !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	for _, e := range p.Maintainers {
		add(e)
	}
	pkgs := slices.Sorted(maps.Keys(p.PackageOwners))
	if len(pkgs) > 0 {
		for _, e := range p.PackageOwners[pkgs[0]] {
			every := true
			for _, pkg := range pkgs[1:] {
				if !slices.ContainsFunc(p.PackageOwners[pkg], func(o string) bool { return strings.EqualFold(o, e) }) {
					every = false
					break
				}
			}
			if every {
				add(e)
			}
		}
	}
	if p.WriteAccess {
		add(WriteAccessText)
	}
	return out
}
