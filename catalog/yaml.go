package catalog

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/catalogbot/catalogbot/catalog/internal/scan"
	"github.com/catalogbot/catalogbot/catalog/internal/yamljson"
)

// YAML catalogs are read the way opm reads them: documents split on lines starting with "---", each
// converted to JSON by sigs.k8s.io/yaml (YAML 1.1 scalars, as Kubernetes does), then decoded as a blob.

// yamlDoc is a document's byte range in its file, the offset of its first meaningful line, and what the
// search for its end learnt of its text.
type yamlDoc struct {
	start, end, first int
	text              docText
}

// docText is what yamljson.ScanDocument, reading a document to find its end, said of its text.
type docText uint8

const (
	textUnread   docText = iota // not read so: the converter reads it
	textPlain                   // all of it is text yamljson converts: it is not read again for that
	textNotPlain                // yamljson refuses some of it: the document goes to sigs.k8s.io/yaml
)

// yamlDocs finds the documents of a YAML stream one at a time, so the loader reads a file's bytes once, in
// order (see releaseBefore). A separator line with anything but a comment after the dashes is an error
// (as in Kubernetes' YAML reader) that ends the stream; the documents before it are still returned.
type yamlDocs struct {
	data     []byte
	start, i int // the current document starts at start; lines before i are read
}

func newYAMLDocs(data []byte, from int) *yamlDocs { return &yamlDocs{data: data, start: from, i: from} }

// next returns the next document; ok false when there is none, with the error of a bad separator, which
// ends the stream.
func (y *yamlDocs) next() (d yamlDoc, ok bool, err error) {
	data := y.data
	text := textUnread // what the search for this document's end learnt of its text
	for y.i < len(data) {
		i := y.i // a line's start
		if !isSeparator(data[i:]) {
			// only a line starting with "---" matters: jump to the next one
			var k int
			if k, text = separatorAfter(data[i:], i == y.start); k < 0 {
				y.i = len(data)
				break
			}
			i += k
		}
		eol := bytes.IndexByte(data[i:], '\n')
		next := len(data)
		if eol >= 0 {
			next = i + eol + 1
		}
		y.i = next
		line := data[i:next]
		if isSeparator(line) {
			rest := strings.TrimSpace(string(line[3:]))
			if rest != "" && rest[0] != '#' {
				y.start, y.i = len(data), len(data)
				return yamlDoc{}, false, &scan.SyntaxError{Off: i, Msg: fmt.Sprintf("invalid YAML document separator: %s", rest)}
			}
			// Kubernetes' reader ends a document only at a separator that follows some text; a separator
			// with nothing before it is kept as the first line of the next document, so "---" alone (or
			// "---" right after another separator) is an empty document, which opm rejects.
			if i > y.start {
				d, y.start = newDoc(data, y.start, i), next
				d.text = text
				return d, true, nil
			}
		}
	}
	if len(data) > y.start {
		d, y.start = newDoc(data, y.start, len(data)), len(data)
		d.text = text
		return d, true, nil
	}
	return yamlDoc{}, false, nil
}

// separatorAfter returns the offset in b of its first line after the first that starts with "---", or -1
// (nextSeparatorLine). From a document's start (docStart) it reads the document as the converter would
// first (yamljson.ScanDocument), which finds that line on the way when the text is plain and otherwise says
// where to search from, and returns what it learnt of the document's text; else textUnread.
func separatorAfter(b []byte, docStart bool) (k int, text docText) {
	from := 0
	if docStart {
		end, plain := yamljson.ScanDocument(b)
		if plain {
			if end == len(b) {
				return -1, textPlain
			}
			return end, textPlain
		}
		text, from = textNotPlain, end // no line before end's starts with "---"
	}
	if k = nextSeparatorLine(b[from:]); k < 0 {
		return -1, text
	}
	return from + k, text
}

// isSeparator reports whether a line starts with the document separator "---".
func isSeparator(line []byte) bool { return bytes.HasPrefix(line, separator) }

var separator = []byte("---")

// nextSeparatorLine returns the offset in b of the first line after b's first that starts with "---", or
// -1. It looks for the dashes and then at the byte before them, not for a line feed followed by them:
// bytes.Index jumps from one occurrence of its needle's first byte to the next, and a catalog's lines are
// short (44 bytes on average in community-operators-prod v4.22, whose 12.6 MB hold 285,000 line feeds
// and 128,000 dashes but only 1,230 pairs of dashes).
func nextSeparatorLine(b []byte) int {
	for off := 1; off < len(b); {
		k := bytes.Index(b[off:], separator)
		if k < 0 {
			return -1
		}
		at := off + k
		if b[at-1] == '\n' {
			return at
		}
		off = at + 1
	}
	return -1
}

func newDoc(data []byte, start, end int) yamlDoc {
	d := yamlDoc{start: start, end: end, first: start}
	for i := start; i < end; {
		eol := bytes.IndexByte(data[i:end], '\n')
		next := end
		if eol >= 0 {
			next = i + eol + 1
		}
		if t := bytes.TrimSpace(data[i:next]); len(t) > 0 && t[0] != '#' && !(i == start && isSeparator(data[i:next])) {
			d.first = i
			break
		}
		i = next
	}
	return d
}

// docJSON converts a document to JSON, into dst's memory when it can; nil means the document is empty
// (null), as a comment-only one is. elide and elided are yamlToJSON's.
func docJSON(dst, data []byte, d yamlDoc, elide string) (js []byte, elided bool, err error) {
	js, elided, err = yamlToJSON(dst, data[d.start:d.end], d.text, elide)
	if err != nil {
		return nil, false, err
	}
	if t := bytes.TrimSpace(js); bytes.Equal(t, []byte("null")) {
		return nil, false, nil
	}
	return js, elided, nil
}

// elide returns the type of the properties whose values a load with these options converts without their
// strings (LoadOptions.CSVTypesOnly, in a lean load only; see loadYAML), or "".
func (o *LoadOptions) elide() string {
	if o.Lean && o.CSVTypesOnly {
		return PropertyCSVMetadata
	}
	return ""
}

// reuseJSON says whether a YAML document's JSON is converted into the memory of the previous one's (a
// variable so tests can compare with fresh memory for each). Reused, it costs no garbage, and a worker's
// heap does not fragment into documents of every size.
var reuseJSON = true

// loadYAML reads data[from:] as a YAML stream.
func (l *fileLoader) loadYAML(data []byte, from int) {
	docs := newYAMLDocs(data, from)
	defer func() { l.yamlDoc = nil }()
	for {
		d, ok, splitErr := docs.next()
		if !ok {
			if splitErr != nil {
				l.yamlDoc = nil
				l.reportErr(splitErr)
			}
			return
		}
		l.reach(docs.i)
		l.releaseBefore(d.start)
		l.yamlDoc = nil
		pos := l.pos(d.first)
		js, elided, ok := l.docJSON(data, d, pos, l.elide)
		if !ok {
			return
		}
		if js == nil {
			l.report(pos, RuleMissingSchema, "document is empty or only comments, so it has no \"schema\" key",
				"remove the document, or list non-catalog files in a .indexignore file")
			continue
		}
		l.yamlDoc = &pos
		i := scan.SkipSpace(js, 0)
		if _, ok, err := l.bundleBlob(js, i); ok {
			if err != nil {
				l.reportErr(err)
			}
			continue
		}
		if elided {
			// only a bundle read in one pass is checked without its CSV's strings: anything else, a
			// bundle the one pass does not take included, is read from its whole JSON (yamljson converts
			// it again: it took it with elision, which declines more, never less)
			if js, _, ok = l.docJSON(data, d, pos, ""); !ok {
				return
			}
			i = scan.SkipSpace(js, 0)
		}
		m, end, err := l.keys.metaKeys(js, i)
		if err != nil {
			l.reportErr(err)
			return
		}
		nch := len(l.cat.Channels)
		if err := l.decodeBlob(js, i, end, m); err != nil {
			l.reportErr(err)
			continue
		}
		if len(l.cat.Channels) > nch {
			yamlEntryPositions(data, d, pos, l.cat.Channels[nch])
		}
	}
}

// docJSON converts document d of data, at pos, as docJSON does into the loader's reused buffer (see
// reuseJSON); ok false when it is not YAML, which it reports, and which ends the file.
func (l *fileLoader) docJSON(data []byte, d yamlDoc, pos Pos, elide string) (js []byte, elided, ok bool) {
	dst := l.js
	if cap(dst) > maxKeptBuffer && d.end-d.start <= maxKeptBuffer {
		dst = nil // a large document's buffer serves the next large one only (see maxKeptBuffer)
	}
	js, elided, err := docJSON(dst, data, d, elide)
	if reuseJSON {
		l.js = js[:0] // nothing the catalog keeps points into it (the decoders copy what they keep)
	}
	if err != nil {
		l.report(pos, RuleYAML, "YAML error: "+strings.TrimPrefix(err.Error(), "error converting YAML to JSON: "),
			"fix the YAML syntax of this document")
		return nil, false, false
	}
	return js, elided, true
}

// yamlEntryPositions locates each channel entry by its "name:" line inside the document.
func yamlEntryPositions(data []byte, d yamlDoc, docPos Pos, c *Channel) {
	text := data[d.start:d.end]
	line := docPos.Line - bytes.Count(data[d.start:d.first], []byte("\n"))
	k, at := 0, 0 // line k of the document starts at text[at:] (past the end after the last line)
	for n := range c.Entries {
		c.Entries[n].Pos = docPos
		for ; at <= len(text); k++ {
			l := text[at:]
			if eol := bytes.IndexByte(l, '\n'); eol >= 0 {
				l = l[:eol]
			}
			at += len(l) + 1
			t := bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(l), []byte("-")))
			if v, ok := bytes.CutPrefix(t, []byte("name:")); ok && string(bytes.Trim(bytes.TrimSpace(v), `"'`)) == c.Entries[n].Name {
				c.Entries[n].Pos = Pos{File: docPos.File, Line: line + k, Column: 1 + len(l) - len(bytes.TrimLeft(l, " -"))}
				k++
				break
			}
		}
	}
}
