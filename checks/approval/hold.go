package approval

import "strings"

// MayLiftHold reports whether user may lift a hold placed by holders (the logins recorded as placing it;
// empty when nobody is recorded, such as a label added while the bot was not listening). A maintainer
// (privileged) lifts any hold; anyone else, the author included, only a hold placed by themselves
// alone. A hold of unknown origin counts as someone else's.
func MayLiftHold(user string, holders []string, privileged bool) bool {
	if privileged {
		return true
	}
	if len(holders) == 0 {
		return false
	}
	for _, h := range holders {
		if !strings.EqualFold(h, user) {
			return false
		}
	}
	return true
}
