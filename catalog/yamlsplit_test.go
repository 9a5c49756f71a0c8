package catalog

import (
	"bytes"
	"testing"
)

// nextSeparatorLine finds what searching for a line feed followed by "---" finds, on every text of up to
// nine line feeds, dashes and letters (every overlap of dash runs with line starts).
func TestNextSeparatorLineIsTheLineFeedSearch(t *testing.T) {
	want := func(b []byte) int {
		if k := bytes.Index(b, []byte("\n---")); k >= 0 {
			return k + 1
		}
		return -1
	}
	alphabet := []byte{'\n', '-', 'a'}
	var each func(b []byte)
	each = func(b []byte) {
		if got, w := nextSeparatorLine(b), want(b); got != w {
			t.Fatalf("nextSeparatorLine(%q) = %d, want %d", b, got, w)
		}
		if len(b) == 9 {
			return
		}
		for _, c := range alphabet {
			each(append(b, c))
		}
	}
	each(nil)
}
