package bot

import (
	"fmt"
	"time"

	"github.com/catalogbot/catalogbot/bot/store"
)

// A flood of /retest on a pull request is bounded twice: a /retest never stops the running check (it
// queues one re-check, which a later /retest supersedes: at most one running and one queued check per
// pull request), and each commenter's /retest comments on a pull request are admitted at most
// retestLimit times per retestWindow; the first one over the limit is answered with one reply, the
// rest with nothing.
const (
	retestLimit  = 3
	retestWindow = 10 * time.Minute
)

// retestRefusal is the one reply to a commenter over the limit.
func retestRefusal(user string, a store.RetestAdmission) string {
	return fmt.Sprintf("`/retest`: @%s asked for %d re-checks of this pull request in the last %s already; further `/retest` comments are ignored until %s UTC",
		user, retestLimit, retestWindow, a.Until.UTC().Format("15:04"))
}
