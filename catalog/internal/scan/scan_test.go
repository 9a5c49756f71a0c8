package scan

import (
	"strings"
	"testing"
)

// scanStringBytewise is ScanString's definition, a byte at a time: where the string starting at data[i]
// ends, whether it holds an escape, and whether it is well formed.
func scanStringBytewise(data []byte, i int) (end int, escaped, ok bool) {
	for i++; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			return i + 1, escaped, true
		case c < 0x20:
			return i, escaped, false
		case c == '\\':
			escaped = true
			if i+1 >= len(data) || !strings.ContainsRune(`"\/bfnrtu`, rune(data[i+1])) {
				return i + 1, escaped, false
			}
			if data[i+1] == 'u' {
				for k := 2; k < 6; k++ {
					if i+k >= len(data) || !isHex(data[i+k]) {
						return i + k, escaped, false
					}
				}
				i += 4
			}
			i++
		}
	}
	return i, escaped, false
}

// TestScanStringStopsAtTheFirstStop puts every byte value at every offset of the first words of a string,
// after fills that borrow in the word test (control characters, quotes, backslashes, bytes from 0x80 up)
// or do not, and holds ScanString to the byte-wise definition.
func TestScanStringStopsAtTheFirstStop(t *testing.T) {
	for _, fill := range []byte{'a', ' ', 0x1f, 0x21, '"', '\\', 0x5b, 0x5d, 0x7f, 0x80, 0xff} {
		for off := range 20 {
			for b := range 256 {
				for _, tail := range []string{`"`, `x"`, `n0123456789abcdef"`, `u00e9 \u2028"`, ``} {
					data := []byte(`"` + strings.Repeat(string([]byte{fill}), off) + string([]byte{byte(b)}) + tail)
					wantEnd, wantEsc, wantOK := scanStringBytewise(data, 0)
					end, esc, err := ScanString(data, 0)
					if (err == nil) != wantOK || wantOK && (end != wantEnd || esc != wantEsc) {
						t.Fatalf("ScanString(%q) = %d, %v, %v; want %d, %v, ok %v", data, end, esc, err, wantEnd, wantEsc, wantOK)
					}
				}
			}
		}
	}
}
