package owners

import (
	"regexp"
	"strings"
)

// GitHub logins: letters, digits and hyphens, not starting with a hyphen, at most 39 characters. Legacy
// accounts may contain consecutive or trailing hyphens, so those are accepted. GitHub App bots log in as
// "name[bot]".
var (
	loginRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,38}(\[bot\])?$`)
	// Team slugs are lowercased names with other characters turned into hyphens; accept any case.
	teamRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$`)
)

// principal is one entry of a maintainers or owners list: a login, or a team as org/team.
type principal struct {
	raw              string
	login, org, team string // lowercased
}

func (p principal) isTeam() bool { return p.team != "" }

// parsePrincipal parses "login" or "org/team"; ok is false with a reason when the syntax is wrong.
func parsePrincipal(s string) (principal, string, bool) {
	if strings.HasPrefix(s, "@") {
		return principal{}, "drop the leading @", false
	}
	if org, team, isTeam := strings.Cut(s, "/"); isTeam {
		switch {
		case !loginRE.MatchString(org) || strings.HasSuffix(org, "[bot]"):
			return principal{}, "the organization in org/team is not a valid GitHub login", false
		case !teamRE.MatchString(team):
			return principal{}, "the team in org/team is not a valid team slug", false
		}
		return principal{raw: s, org: strings.ToLower(org), team: strings.ToLower(team)}, "", true
	}
	if !loginRE.MatchString(s) {
		return principal{}, "a GitHub login has 1-39 letters, digits or hyphens and does not start with a hyphen", false
	}
	return principal{raw: s, login: strings.ToLower(s)}, "", true
}

// validLogin reports whether s is a GitHub login (not a team).
func validLogin(s string) bool {
	p, _, ok := parsePrincipal(s)
	return ok && !p.isTeam()
}
