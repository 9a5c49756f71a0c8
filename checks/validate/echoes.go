package validate

import (
	"sync"

	"github.com/catalogbot/catalogbot/diag"
)

// rejectedBundles are the bundles the loader rejected (an olm.bundle.object that is not base64, say). Such a
// bundle is not in the model, so each channel entry naming it would also read as an entry without a
// bundle: that diagnostic only echoes the load error, which says what is wrong; opm reports it alone.
type rejectedBundles struct {
	mu  sync.Mutex
	set map[[2]string]bool
}

// observe records d's bundle when d is a load error about a bundle (the loader calls it concurrently).
func (r *rejectedBundles) observe(d diag.Diagnostic) {
	if d.Severity != diag.Error || d.Bundle == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.set == nil {
		r.set = map[[2]string]bool{}
	}
	r.set[[2]string{d.Package, d.Bundle}] = true
}

// echo reports whether a model diagnostic only echoes the rejection of its bundle.
func (r *rejectedBundles) echo(d diag.Diagnostic) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return d.Rule == "channel-entry-without-bundle" && r.set[[2]string{d.Package, d.Bundle}]
}
