package initgc

import (
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func gcPercent() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

// Restore turns collection back on with the first collection waiting for four times the runtime's first
// goal, then the GOGC pace from the first collection on.
func TestRestorePacesTheFirstCollectionOnly(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set: Restore gives it back as it is")
	}
	if p := gcPercent(); p != -1 {
		t.Fatalf("collection is on before Restore (GOGC %d): the package's initialiser turns it off", p)
	}
	Restore()
	if p := gcPercent(); p != percent*firstHeapFactor {
		t.Fatalf("after Restore GOGC is %d, want %d until the first collection", p, percent*firstHeapFactor)
	}
	Restore() // again: nothing more
	runtime.GC()
	for deadline := time.Now().Add(10 * time.Second); gcPercent() != percent; {
		if time.Now().After(deadline) {
			t.Fatalf("GOGC is %d after a collection, want %d", gcPercent(), percent)
		}
		time.Sleep(time.Millisecond)
	}
}
