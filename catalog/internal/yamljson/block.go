package yamljson

import "bytes"

// parser reads one document. Every node reader leaves pos at the start of the line after the node's last
// line (or at the end of the document); indentation is counted in bytes, which is go-yaml's column count
// because indentation is spaces only.
type parser struct {
	doc   []byte
	pos   int
	out   []byte
	depth int
	ents  []entry // entries of the open mappings, innermost last
	keys  []byte  // their keys as encoding/json sorts them
	tmp   []byte  // a scalar built from several pieces
	swap  []byte  // a mapping's entries while they are reordered
	// elision (elide.go): the type of the values to elide ("": none) and the JSON of the "type" entry
	// that tags them, how deep in elided values the parser is, and how many it elided
	elideType     string
	elideEntry    []byte
	elide, elided int
	// the line last found by lineEnd: doc[lineFrom:lineTo] holds no line feed, lineTo ends it
	lineFrom, lineTo int
}

// context says what holds a value: a mapping (an indentless sequence may follow its key) or a sequence
// (a compact mapping or sequence may start on the entry's line).
type context int

const (
	inMapping context = iota
	inSequence
)

func (p *parser) enter() {
	p.depth++
	if p.depth > maxDepth {
		panic(errDecline)
	}
}

func decline() { panic(errDecline) }

// document reads the whole document: an optional "---" line, then one block mapping or sequence, or
// nothing (null).
func (p *parser) document() (err error) {
	defer func() {
		if r := recover(); r != nil {
			if r != errDecline {
				panic(r)
			}
			err = errDecline
		}
	}()
	i := 0
	if bytes.HasPrefix(p.doc, []byte("---")) {
		i = p.restOfLine(3)
	}
	ls, ind := p.nextContent(i)
	if ls == len(p.doc) {
		p.out = append(p.out, "null"...)
		return nil
	}
	c := ls + ind
	switch {
	case p.blockEntry(c):
		p.sequence(ind, c, false)
	case p.keyColon(c) >= 0:
		p.mapping(ind, c)
	default:
		decline()
	}
	if ls, _ := p.nextContent(p.pos); ls != len(p.doc) {
		decline()
	}
	return nil
}

// restOfLine checks that doc[i:] up to the end of its line is blank or a comment after a blank, and
// returns the start of the next line.
func (p *parser) restOfLine(i int) int {
	le := p.lineEnd(i)
	j := i
	for j < le && p.doc[j] == ' ' {
		j++
	}
	if j < le && (p.doc[j] != '#' || j == i) {
		decline()
	}
	return p.next(le)
}

// lineEnd returns the offset of the line feed ending the line holding i, or the document's length.
func (p *parser) lineEnd(i int) int {
	if p.lineFrom <= i && i <= p.lineTo {
		return p.lineTo
	}
	p.lineFrom, p.lineTo = i, len(p.doc)
	if k := bytes.IndexByte(p.doc[i:], '\n'); k >= 0 {
		p.lineTo = i + k
	}
	return p.lineTo
}

// next returns the start of the line after the one ending at le.
func (p *parser) next(le int) int {
	if le < len(p.doc) {
		return le + 1
	}
	return le
}

// nextContent skips blank and comment lines from the line start i; it returns the start of the next line
// with content and its indentation, or the document's length.
func (p *parser) nextContent(i int) (lineStart, indent int) {
	for i < len(p.doc) {
		j := i
		for j < len(p.doc) && p.doc[j] == ' ' {
			j++
		}
		if j < len(p.doc) && p.doc[j] != '\n' && p.doc[j] != '#' {
			return i, j - i
		}
		i = p.next(p.lineEnd(j))
	}
	return len(p.doc), 0
}

// blank reports whether doc[i] is a space, a line feed or the end: go-yaml's is_blankz.
func (p *parser) blank(i int) bool {
	return i >= len(p.doc) || p.doc[i] == ' ' || p.doc[i] == '\n'
}

// blockEntry reports whether a sequence entry indicator "-" starts at i.
func (p *parser) blockEntry(i int) bool { return p.doc[i] == '-' && p.blank(i+1) }

// mapping reads a block mapping whose keys stand at column n, the first one at offset at.
func (p *parser) mapping(n, at int) {
	p.enter()
	mark, keyMark := len(p.ents), len(p.keys)
	p.out = append(p.out, '{')
	start := len(p.out)
	for {
		if len(p.ents) > mark {
			p.out = append(p.out, ',')
		}
		e := entry{from: len(p.out), keyFrom: len(p.keys)}
		p.pos = p.key(at, &e)
		e.keyTo = len(p.keys)
		tagged := p.taggedValue(mark, e)
		if tagged {
			p.elide++
		}
		p.value(n, inMapping)
		if tagged {
			p.elide--
			p.elided++
		}
		e.to = len(p.out)
		p.ents = append(p.ents, e)
		ls, ind := p.nextContent(p.pos)
		if ls == len(p.doc) || ind < n {
			break
		}
		at = ls + ind
		if ind > n || p.blockEntry(at) || tagged { // a key after an elided value (see elide.go)
			decline()
		}
	}
	p.sortEntries(start, mark)
	p.out = append(p.out, '}')
	p.ents, p.keys = p.ents[:mark], p.keys[:keyMark]
	p.depth--
}

// sequence reads a block sequence whose "-" stand at column n, the first at offset at. An indentless
// sequence (a mapping value whose entries stand at the key's column) ends at the mapping's next key.
func (p *parser) sequence(n, at int, indentless bool) {
	p.enter()
	p.out = append(p.out, '[')
	for first := true; ; first = false {
		if !first {
			p.out = append(p.out, ',')
		}
		p.pos = at + 1
		p.value(n, inSequence)
		ls, ind := p.nextContent(p.pos)
		if ls == len(p.doc) || ind < n {
			break
		}
		at = ls + ind
		if ind > n {
			decline()
		}
		if !p.blockEntry(at) {
			if indentless {
				break
			}
			decline()
		}
	}
	p.out = append(p.out, ']')
	p.depth--
}

// value reads the node after a key's ":" or an entry's "-" (p.pos is just past the indicator); parent is
// the column of the mapping's keys or of the sequence's "-" (go-yaml's current indentation).
func (p *parser) value(parent int, ctx context) {
	i := p.pos
	for i < len(p.doc) && p.doc[i] == ' ' {
		i++
	}
	if i == len(p.doc) || p.doc[i] == '\n' || p.doc[i] == '#' {
		p.nextLineValue(parent, ctx, p.next(p.lineEnd(i)))
		return
	}
	switch c := p.doc[i]; c {
	case '|', '>':
		p.blockScalar(i, parent)
	case '"', '\'':
		end := p.quoted(i, parent)
		if end < len(p.doc) && p.doc[end] == ':' && p.blank(end+1) {
			if ctx != inSequence || p.lineEnd(end) != p.lineEnd(i) {
				decline()
			}
			p.mapping(p.column(i), i)
			return
		}
		p.appendString(p.tmp)
		p.pos = p.restOfLine(end)
	case '{', '[':
		if i+1 >= len(p.doc) || p.doc[i+1] != c+2 { // '{'+2 == '}', '['+2 == ']'
			decline()
		}
		p.out = append(p.out, c, c+2)
		p.pos = p.restOfLine(i + 2)
	case '-':
		if p.blank(i + 1) {
			if ctx != inSequence {
				decline()
			}
			p.sequence(p.column(i), i, false)
			return
		}
		p.plainOrKey(i, parent, ctx)
	default:
		p.plainOrKey(i, parent, ctx)
	}
}

// plainOrKey reads a plain scalar starting at i, or the compact mapping it is the first key of.
func (p *parser) plainOrKey(i, parent int, ctx context) {
	if !p.plainStart(i) {
		decline()
	}
	// after a key, a second key on the line declines in plain (a ":" and a blank before any comment)
	if ctx == inSequence && p.keyColon(i) >= 0 {
		p.mapping(p.column(i), i)
		return
	}
	p.plain(i, parent)
}

// nextLineValue reads a value that is not on its indicator's line: a nested block collection, an
// indentless sequence, or nothing (null).
func (p *parser) nextLineValue(parent int, ctx context, from int) {
	p.pos = from
	ls, ind := p.nextContent(from)
	if ls == len(p.doc) || ind < parent || ind == parent && (ctx != inMapping || !p.blockEntry(ls+ind)) {
		p.out = append(p.out, "null"...)
		return
	}
	c := ls + ind
	switch {
	case p.blockEntry(c):
		p.sequence(ind, c, ind == parent)
	case p.keyColon(c) >= 0:
		p.mapping(ind, c)
	default:
		decline()
	}
}

// column returns the column of offset i, counted only where a compact collection needs it.
func (p *parser) column(i int) int {
	return i - (bytes.LastIndexByte(p.doc[:i], '\n') + 1)
}

// keyColon returns the offset of the ":" that makes the text at i a simple key on its line, or -1. A
// key is a plain scalar or a quoted one; anything go-yaml might read otherwise declines.
func (p *parser) keyColon(i int) int {
	switch p.doc[i] {
	case '"', '\'':
		le := p.lineEnd(i)
		end := p.quotedEndOnLine(i, le)
		if end < 0 || end >= le || p.doc[end] != ':' || !p.blank(end+1) {
			return -1
		}
		return end
	}
	if c, colon := p.indicatorAt(i, len(p.doc)); colon { // the scan stops at the line's end
		return c
	}
	return -1
}

// quotedEndOnLine returns the offset just past the closing quote of the quoted scalar at i when it closes
// on its line, or -1.
func (p *parser) quotedEndOnLine(i, le int) int {
	q := p.doc[i]
	for j := i + 1; j < le; j++ {
		switch c := p.doc[j]; {
		case q == '\'' && c == '\'':
			if j+1 < le && p.doc[j+1] == '\'' {
				j++
				continue
			}
			return j + 1
		case q == '"' && c == '\\':
			j++
		case q == '"' && c == '"':
			return j + 1
		}
	}
	return -1
}

// key reads the simple key at i into the entry, writes `"key":` and returns the offset after the ":".
func (p *parser) key(i int, e *entry) int {
	colon := p.keyColon(i)
	if colon < 0 || colon-i > 1000 {
		decline()
	}
	if c := p.doc[i]; c == '"' || c == '\'' {
		if p.quoted(i, -1) != colon {
			decline()
		}
		p.keys = append(p.keys, p.tmp...)
		e.kind = kindString
	} else {
		if !p.plainStart(i) || p.doc[colon-1] == ' ' {
			decline()
		}
		raw := p.doc[i:colon]
		p.keys, e.kind = appendKey(p.keys, raw)
	}
	p.out = appendString(p.out, p.keys[e.keyFrom:])
	p.out = append(p.out, ':')
	return colon + 1
}

// plainStart reports whether a plain scalar may start at i (go-yaml's rule in block context, minus the
// indicators this package declines).
func (p *parser) plainStart(i int) bool {
	switch p.doc[i] {
	case '-', '?', ':':
		return !p.blank(i + 1)
	case ' ', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return false
	}
	return true
}
