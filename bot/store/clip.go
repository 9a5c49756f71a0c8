package store

import (
	"fmt"
	"unicode/utf8"
)

// MaxErrorRunes bounds an error the store records and a status page shows: an error can quote a
// registry's or GitHub's answer.
const MaxErrorRunes = 2000

// ClipRunes cuts s to n runes, saying how many it left out.
func ClipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	runes := []rune(s)
	return string(runes[:n]) + fmt.Sprintf("… (%d more characters)", len(runes)-n)
}
