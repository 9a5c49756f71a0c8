package config

import (
	"regexp"
	"sync"
)

// lazyRegexp compiles expr on first use. Compiled at init, config's expressions (the counted
// repetitions of names, {0,99}, make large programs) cost every catalogbot run, whatever the verb,
// a quarter of a megabyte of allocations (internal/archtest's TestStartupInitialisersStayCheap).
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
