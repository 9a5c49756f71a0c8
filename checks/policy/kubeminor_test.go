package policy

import (
	"regexp"
	"strconv"
	"testing"
)

// kubeMinor reads what the former pattern ^v?1\.(\d{1,3})(\.\d+)?$ read, without a regexp at start-up.
func TestKubeMinorAsThePattern(t *testing.T) {
	re := regexp.MustCompile(`^v?1\.(\d{1,3})(\.\d+)?$`)
	for _, v := range []string{"1.29", "v1.29", " 1.29 ", "1.29.3", "1.2", "1.123", "1.1234", "1.", "1.x", "2.29", "1.29.", "1.29.3.1",
		"v1.30.0", "1.-1", "1.29.x", "", "v", "1..2", "1.0"} {
		want, wantOK := 0, false
		if m := re.FindStringSubmatch(trimSpace(v)); m != nil {
			want, _ = strconv.Atoi(m[1])
			wantOK = true
		}
		if got, ok := kubeMinor(v); got != want || ok != wantOK {
			t.Errorf("kubeMinor(%q) = %d, %v; the pattern reads %d, %v", v, got, ok, want, wantOK)
		}
	}
}

func trimSpace(s string) string {
	for len(s) > 0 && s[0] == ' ' {
		s = s[1:]
	}
	for len(s) > 0 && s[len(s)-1] == ' ' {
		s = s[:len(s)-1]
	}
	return s
}
