package validate

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// naiveToken is containsToken by its definition: some occurrence of name with no name byte on either side.
func naiveToken(data, name []byte) bool {
	for s := 0; s+len(name) <= len(data); s++ {
		e := s + len(name)
		if bytes.Equal(data[s:e], name) && (s == 0 || !nameByte(data[s-1])) && (e == len(data) || !nameByte(data[e])) {
			return true
		}
	}
	return false
}

func TestContainsToken(t *testing.T) {
	for _, c := range []struct {
		data, name string
		want       bool
	}{
		{`{"package":"etcd"}`, "etcd", true},
		{"etcd", "etcd", true},
		{"etcdoperator etcd-x", "etcd", false},
		{"xetcd etcd.", "etcd", false},
		{"etcd\n", "etcd", true},
		{"- name: etcd-operator", "etcd-operator", true},
		{"etcd-operatorq etcd-operato", "etcd-operator", false},
		{"qq q", "q", true},
		{"", "q", false},
	} {
		if got := containsToken([]byte(c.data), []byte(c.name)); got != c.want {
			t.Errorf("containsToken(%q, %q) = %v, want %v", c.data, c.name, got, c.want)
		}
	}
	// random text over a small alphabet, so names and near-names occur often, against the definition
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "etcd-.q \"\n"
	gen := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return b
	}
	for range 20000 {
		name := bytes.Trim(gen(1+r.IntN(4)), " \"\n")
		if len(name) == 0 {
			continue
		}
		data := gen(r.IntN(40))
		if got, want := containsToken(data, name), naiveToken(data, name); got != want {
			t.Fatalf("containsToken(%q, %q) = %v, want %v", data, name, got, want)
		}
	}
}
