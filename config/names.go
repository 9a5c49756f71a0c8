package config

import (
	"strings"
)

// GitHub logins: letters, digits and hyphens, not starting with a hyphen, at most 39 characters. Legacy
// accounts may contain consecutive or trailing hyphens, so those are accepted. GitHub App bots log in as
// "name[bot]".
var (
	loginRE = lazyRegexp(`^[A-Za-z0-9][A-Za-z0-9-]{0,38}(\[bot\])?$`)
	// Team slugs are lowercased names with other characters turned into hyphens; accept any case.
	teamRE = lazyRegexp(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$`)
)

// Principal is one entry of a maintainers or owners list: a login, or a team as org/team.
type Principal struct {
	Raw              string // as written
	Login, Org, Team string // lowercased
}

// IsTeam reports whether p names a team (org/team) rather than a login.
func (p Principal) IsTeam() bool { return p.Team != "" }

// ParsePrincipal parses "login" or "org/team"; ok is false with a reason when the syntax is wrong.
func ParsePrincipal(s string) (Principal, string, bool) {
	if strings.HasPrefix(s, "@") {
		return Principal{}, "drop the leading @", false
	}
	if org, team, isTeam := strings.Cut(s, "/"); isTeam {
		switch {
		case !loginRE().MatchString(org) || strings.HasSuffix(org, "[bot]"):
			return Principal{}, "the organization in org/team is not a valid GitHub login", false
		case !teamRE().MatchString(team):
			return Principal{}, "the team in org/team is not a valid team slug", false
		}
		return Principal{Raw: s, Org: strings.ToLower(org), Team: strings.ToLower(team)}, "", true
	}
	if !loginRE().MatchString(s) {
		return Principal{}, "a GitHub login has 1-39 letters, digits or hyphens and does not start with a hyphen", false
	}
	return Principal{Raw: s, Login: strings.ToLower(s)}, "", true
}

// ValidLogin reports whether s is a GitHub login (not a team).
func ValidLogin(s string) bool {
	p, _, ok := ParsePrincipal(s)
	return ok && !p.IsTeam()
}
