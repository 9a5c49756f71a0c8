package yamljson

import (
	"strings"
	"testing"
)

// hostile are fuzz seeds for what the package must decline or get exactly right: every construct it
// declines, alias bombs, deep nesting, huge scalars, and near misses of the subset.
var hostile = []string{
	// alias bomb (billion laughs)
	"a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n" +
		"b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n",
	"a: &a\n  b: *a\n",
	"base: &base\n  x: 1\nderived:\n  <<: *base\n  y: 2\n",
	"a: !!binary aGVsbG8=\nb: !custom x\nc: !!int \"3\"\n",
	"a: {b: [1, {c: d}], e: f}\n",
	"[a, b]: c\n",
	"? - a\n  - b\n: c\n",
	"%TAG ! tag:example.com,2000:\n---\na: !foo b\n",
	"a:\n\t- b\n",
	"a: b\r\n",
	"\xef\xbb\xbfa: b\n",
	strings.Repeat("- ", 5000) + "x\n",
	strings.Repeat("a:\n", 100) + "b: c\n",
	"a: " + strings.Repeat("x", 200000) + "\n",
	"a: |\n" + strings.Repeat("  line of text\n", 5000),
	"a: \"" + strings.Repeat("\\u00e9", 2000) + "\"\n",
	"a:\n   b: 1\n  c: 2\n",
	"a: |1\n  x\n",
	"a: >\n\n\n  x\n",
	"a: |\n    \n  x\n",
	"a: |\n  x\n    \n  \n",
	"a: 'one\ntwo'\n",
	"a: \"x\\\n\"\n",
	"- - - a\n    - b\n  - c\n- d\n",
	"a:\n- b\n-\n  c: d\n- e: f\n  g:\n  - h\n",
	"a: 0b\nb: 0x\nc: 0o\nd: -0b101\ne: 0b-1\nf: +.5\ng: -.5e3\nh: 1__0\ni: _1\nj: 1_\n",
	"1: a\n2: b\n10: c\n-1: d\n0x10: e\n",
	"yes: 1\ntrue: 2\n",
	"a: 1 # c\nb: 'x' # c\nc: \"y\" # c\nd: | # c\n  z\n",
	"a: <>&\u2028\n",
	"a: x\n\n\n",
	"---\n---\n",
	"--- |\n  x\n",
	"a: b\n...\n",
	"a:\n  - b\n  c: d\n",
	"a: - b\n",
	"a: b\n  c: d\n",
	"schema: olm.channel\nname: stable\npackage: foo\nentries:\n- name: foo.v0.1.0\n  replaces: foo.v0.0.9\n  skipRange: '>=0.0.1 <0.1.0'\n  skips:\n  - foo.v0.0.8\n",
}

// FuzzConvert holds the package to its one promise on any input: declined, or byte for byte what
// sigs.k8s.io/yaml.YAMLToJSON returns.
func FuzzConvert(f *testing.F) {
	for _, s := range handled {
		f.Add([]byte(s))
	}
	for _, s := range declined {
		f.Add([]byte(s))
	}
	for _, s := range hostile {
		f.Add([]byte(s))
	}
	for _, s := range realShapes {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		same(t, doc)
	})
}
