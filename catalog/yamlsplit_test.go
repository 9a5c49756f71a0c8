package catalog

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/catalogbot/catalogbot/catalog/internal/scan"
	"github.com/catalogbot/catalogbot/catalog/internal/yamljson"
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

// splitLines is yamlDocs' definition, a line at a time: a line starting with "---" ends the document
// before it unless the document has nothing before it (it is then the document's first line); one with
// anything but a comment after the dashes ends the stream with an error at its offset.
func splitLines(data []byte) (docs [][2]int, errAt int) {
	start := 0
	for i := 0; i < len(data); {
		next := len(data)
		if k := bytes.IndexByte(data[i:], '\n'); k >= 0 {
			next = i + k + 1
		}
		if line := data[i:next]; bytes.HasPrefix(line, []byte("---")) {
			if rest := bytes.TrimSpace(line[3:]); len(rest) > 0 && rest[0] != '#' {
				return docs, i
			}
			if i > start {
				docs = append(docs, [2]int{start, i})
				start = next
			}
		}
		i = next
	}
	if len(data) > start {
		docs = append(docs, [2]int{start, len(data)})
	}
	return docs, -1
}

// yamlDocs splits every text of up to eight line feeds, dashes, letters, comment signs and tabs (plain
// and not: the converter's scan finds the ends of the one, the separator search, from where the scan
// stopped, those of the other), at two offsets, as the line-at-a-time definition does; a document it
// marks plain is one the converter's scan accepts whole, one it marks not plain one the scan refuses.
func TestYAMLDocsSplitAsLines(t *testing.T) {
	alphabet := []byte{'\n', '-', 'a', '#', '\t'}
	scanned, refused := 0, 0
	var each func(b []byte)
	each = func(b []byte) {
		for _, prefix := range []string{"", "key: value\n"} {
			data := append([]byte(prefix), b...)
			wantDocs, wantErr := splitLines(data)
			var got [][2]int
			gotErr := -1
			for docs := newYAMLDocs(data, 0); ; {
				d, ok, err := docs.next()
				if err != nil {
					gotErr = err.(*scan.SyntaxError).Off
				}
				if !ok {
					break
				}
				got = append(got, [2]int{d.start, d.end})
				end, plain := yamljson.ScanDocument(data[d.start:d.end])
				switch whole := plain && end == d.end-d.start; {
				case d.text == textPlain && !whole, d.text == textNotPlain && whole:
					t.Fatalf("%q: document %q marked %d, ScanDocument says %d, %v", data, data[d.start:d.end], d.text, end, plain)
				case d.text == textPlain:
					scanned++
				case d.text == textNotPlain:
					refused++
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(wantDocs) || gotErr != wantErr {
				t.Fatalf("%q: documents %v, error at %d; want %v, error at %d", data, got, gotErr, wantDocs, wantErr)
			}
		}
		if len(b) == 8 {
			return
		}
		for _, c := range alphabet {
			each(append(b, c))
		}
	}
	each(nil)
	if scanned == 0 || refused == 0 {
		t.Errorf("%d documents found plain, %d not: both ways must be tried", scanned, refused)
	}
}

// A YAML channel's entries are placed at their "name:" lines, quoted or not, however the "-" is spaced.
func TestYAMLChannelEntryPositions(t *testing.T) {
	doc := "schema: olm.package\nname: p\ndefaultChannel: stable\n---\n# the channel\nschema: olm.channel\npackage: p\nname: stable\n" +
		"entries:\n  - name: p.v1\n  - name: \"p.v2\"\n    replaces: p.v1\n  -   name: 'p.v3'\n      replaces: p.v2\n"
	res := loadOne(t, "catalog.yaml", []byte(doc), true)
	if len(res.Catalog.Channels) != 1 {
		t.Fatalf("channels %v, diagnostics %v", res.Catalog.Channels, res.Diagnostics)
	}
	want := []Pos{{File: "catalog.yaml", Line: 10, Column: 5}, {File: "catalog.yaml", Line: 11, Column: 5}, {File: "catalog.yaml", Line: 13, Column: 7}}
	for i, e := range res.Catalog.Channels[0].Entries {
		if e.Pos != want[i] {
			t.Errorf("entry %s at %+v, want %+v", e.Name, e.Pos, want[i])
		}
	}
}
