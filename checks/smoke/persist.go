package smoke

import "time"

// persistence tracks how long a condition that may be transient (OLM retries it) has been seen in a row:
// an install fails on it only once it has lasted longer than its grace.
type persistence struct {
	since time.Time
	what  string // what was seen; a different one starts over
}

// lasted records that what is seen now and reports whether it has been seen in a row for longer than grace.
func (p *persistence) lasted(what string, grace time.Duration) bool {
	if p.since.IsZero() || p.what != what {
		p.since, p.what = time.Now(), what
	}
	return time.Since(p.since) > grace
}

// clear records that the condition is not seen now.
func (p *persistence) clear() { p.since, p.what = time.Time{}, "" }
