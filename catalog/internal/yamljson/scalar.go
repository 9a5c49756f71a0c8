package yamljson

import "encoding/binary"

// The scalar readers follow go.yaml.in/yaml/v2's scanner (scannerc.go: yaml_parser_scan_plain_scalar,
// yaml_parser_scan_flow_scalar, yaml_parser_scan_block_scalar) step for step on the input this package
// accepts: spaces and line feeds only, so "blank" is a space and every line break is "\n".

// plain reads the plain scalar at i, a value whose holder's indentation is parent: its lines after the
// first continue it while indented more than parent, whatever they start with but a comment (go-yaml reads
// them inside the scalar, where no indicator but ": " and " #" counts), and fold into one line.
func (p *parser) plain(i, parent int) {
	end, comment, le := p.plainFirstLine(i)
	first := p.doc[i:end]
	p.pos = p.next(le)
	multi, breaks := false, 0
	for j := p.pos; !comment && j < len(p.doc); {
		lej := p.lineEnd(j)
		k := j
		for k < lej && p.doc[k] == ' ' {
			k++
		}
		if k == lej { // a blank line
			if lej == len(p.doc) {
				break
			}
			breaks++
			j = lej + 1
			continue
		}
		if k-j <= parent || p.doc[k] == '#' {
			break
		}
		var e int
		e, comment = p.plainLine(k, lej)
		if !multi {
			p.tmp = append(p.tmp[:0], first...)
			multi = true
		}
		if breaks == 0 {
			p.tmp = append(p.tmp, ' ')
		}
		for ; breaks > 0; breaks-- {
			p.tmp = append(p.tmp, '\n')
		}
		p.tmp = append(p.tmp, p.doc[k:e]...)
		j = p.next(lej)
		p.pos = j
	}
	if multi {
		p.plainValue(p.tmp)
	} else {
		p.plainValue(first)
	}
}

// plainFirstLine is plainLine for the scalar's first line, whose end it finds in the same pass (and leaves
// in lineEnd's cache) unless a comment stops the pass first.
func (p *parser) plainFirstLine(i int) (end int, comment bool, le int) {
	doc := p.doc
	le = len(doc)
	for j := nextStop(doc, i); j < len(doc); j = nextStop(doc, j+1) {
		c := doc[j]
		if c == ':' {
			if p.blank(j + 1) {
				decline()
			}
			continue
		}
		if c == '#' {
			if j > i && doc[j-1] == ' ' {
				end, comment, le = j, true, p.lineEnd(j)
				break
			}
			continue
		}
		le = j // '\n'
		break
	}
	if !comment {
		end = le
		p.lineFrom, p.lineTo = i, le
	}
	for end > i && doc[end-1] == ' ' {
		end--
	}
	return end, comment, le
}

// plainLine returns where the plain scalar text on the line doc[i:le] ends (trailing spaces dropped) and
// whether a comment ends it. A ":" followed by a blank (a mapping value go-yaml would refuse here, or a
// key) declines.
func (p *parser) plainLine(i, le int) (end int, comment bool) {
	end = le
	if at, colon := p.indicatorAt(i, le); colon {
		decline()
	} else if at >= 0 {
		end, comment = at, true
	}
	for end > i && p.doc[end-1] == ' ' {
		end--
	}
	return end, comment
}

// indicatorAt returns the offset of the first ":" followed by a blank or "#" after a space in doc[i:le]
// (a "#" at i itself does not count), whichever comes first, and whether it is the ":"; -1 when there is
// neither before le or the end of the line. One pass over the line finds both: a key's ":" counts only
// before any comment, and a plain scalar's text ends at its comment, where a ":" before it declines.
func (p *parser) indicatorAt(i, le int) (at int, colon bool) {
	doc := p.doc[:le]
	for j := nextStop(doc, i); j < len(doc); j = nextStop(doc, j+1) {
		switch c := doc[j]; c {
		case ':':
			if j+1 == len(doc) || doc[j+1] == ' ' || doc[j+1] == '\n' {
				return j, true
			}
		case '#':
			if j > i && doc[j-1] == ' ' {
				return j, false
			}
		default: // '\n'
			return -1, false
		}
	}
	return -1, false
}

// lineStops holds the bytes plainFirstLine and indicatorAt stop at.
var lineStops = [256]bool{':': true, '#': true, '\n': true}

// nextStop returns the offset of the first line stop at or after j, or len(doc).
func nextStop(doc []byte, j int) int {
	for j = skipNoStops(doc, j); j < len(doc) && !lineStops[doc[j]]; j++ {
	}
	return j
}

// skipNoStops returns the offset of the first eight bytes from j that hold a line stop (':', '#' or a line
// feed), or of the last fewer than eight: a long plain scalar (an inline bundle object's base64, tens of
// kilobytes a line) is looked at a word at a time instead of a byte at a time.
func skipNoStops(doc []byte, j int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	has := func(w, c uint64) uint64 { x := w ^ c*ones; return (x - ones) &^ x & highs } // exact: some byte is c
	for ; j+8 <= len(doc); j += 8 {
		if w := binary.LittleEndian.Uint64(doc[j:]); has(w, ':')|has(w, '#')|has(w, '\n') != 0 {
			break
		}
	}
	return j
}

// quoted reads the single- or double-quoted scalar at i into p.tmp and returns the offset after its
// closing quote. Its continuation lines must be indented more than parent (go-yaml does not ask for it;
// this package declines what it need not read).
func (p *parser) quoted(i, parent int) int {
	doc := p.doc
	single := doc[i] == '\''
	s := p.tmp[:0]
	j := i + 1
	for {
		if j >= len(doc) {
			decline() // go-yaml: found unexpected end of stream
		}
		leadingBlanks := false
	content:
		for j < len(doc) && doc[j] != ' ' && doc[j] != '\n' {
			c := doc[j]
			switch {
			case single && c == '\'' && j+1 < len(doc) && doc[j+1] == '\'':
				s = append(s, '\'')
				j += 2
			case single && c == '\'', !single && c == '"':
				break content
			case !single && c == '\\' && j+1 < len(doc) && doc[j+1] == '\n':
				j += 2
				p.quotedLine(j, parent)
				leadingBlanks = true
				break content
			case !single && c == '\\':
				s, j = p.escape(s, j)
			default:
				s = append(s, c)
				j++
			}
		}
		if j < len(doc) && (single && doc[j] == '\'' || !single && doc[j] == '"') {
			p.tmp = s
			return j + 1
		}
		spaces, leadingBreak, trailing := 0, false, 0
		for j < len(doc) && (doc[j] == ' ' || doc[j] == '\n') {
			if doc[j] == ' ' {
				if !leadingBlanks {
					spaces++
				}
			} else {
				p.quotedLine(j+1, parent)
				if !leadingBlanks {
					spaces, leadingBreak, leadingBlanks = 0, true, true
				} else {
					trailing++
				}
			}
			j++
		}
		switch {
		case leadingBlanks && leadingBreak && trailing == 0:
			s = append(s, ' ')
		case leadingBlanks:
			for ; trailing > 0; trailing-- {
				s = append(s, '\n')
			}
		default:
			for ; spaces > 0; spaces-- {
				s = append(s, ' ')
			}
		}
	}
}

// quotedLine declines when the line starting at i, inside a quoted scalar, has content indented no more
// than parent.
func (p *parser) quotedLine(i, parent int) {
	k := i
	for k < len(p.doc) && p.doc[k] == ' ' {
		k++
	}
	if k < len(p.doc) && p.doc[k] != '\n' && k-i <= parent {
		decline()
	}
}

// escape decodes the escape sequence at doc[j] ('\\') as go-yaml does, appending it to s.
func (p *parser) escape(s []byte, j int) ([]byte, int) {
	doc := p.doc
	if j+1 >= len(doc) {
		decline()
	}
	n := 0
	switch doc[j+1] {
	case '0':
		s = append(s, 0)
	case 'a':
		s = append(s, '\a')
	case 'b':
		s = append(s, '\b')
	case 't':
		s = append(s, '\t')
	case 'n':
		s = append(s, '\n')
	case 'v':
		s = append(s, '\v')
	case 'f':
		s = append(s, '\f')
	case 'r':
		s = append(s, '\r')
	case 'e':
		s = append(s, 0x1B)
	case ' ', '"', '\'', '\\':
		s = append(s, doc[j+1])
	case 'N':
		s = append(s, 0xC2, 0x85)
	case '_':
		s = append(s, 0xC2, 0xA0)
	case 'L':
		s = append(s, 0xE2, 0x80, 0xA8)
	case 'P':
		s = append(s, 0xE2, 0x80, 0xA9)
	case 'x':
		n = 2
	case 'u':
		n = 4
	case 'U':
		n = 8
	default:
		decline() // go-yaml: found unknown escape character
	}
	j += 2
	if n == 0 {
		return s, j
	}
	if j+n > len(doc) {
		decline()
	}
	v := 0
	for k := 0; k < n; k++ {
		d := hexDigit(doc[j+k])
		if d < 0 {
			decline()
		}
		v = v<<4 + d
	}
	if v >= 0xD800 && v <= 0xDFFF || v > 0x10FFFF {
		decline()
	}
	switch {
	case v <= 0x7F:
		s = append(s, byte(v))
	case v <= 0x7FF:
		s = append(s, byte(0xC0+(v>>6)), byte(0x80+(v&0x3F)))
	case v <= 0xFFFF:
		s = append(s, byte(0xE0+(v>>12)), byte(0x80+((v>>6)&0x3F)), byte(0x80+(v&0x3F)))
	default:
		s = append(s, byte(0xF0+(v>>18)), byte(0x80+((v>>12)&0x3F)), byte(0x80+((v>>6)&0x3F)), byte(0x80+(v&0x3F)))
	}
	return s, j + n
}

func hexDigit(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// blockScalar reads the literal (|) or folded (>) scalar whose indicator is at i, held at indentation
// parent, and writes it as a string. Its header may carry a chomping indicator and an indentation
// indicator (1 to 9, in either order), which go-yaml's writer puts on a scalar whose text starts with a
// space or a line break ("|2", "|2-", "|2+"); empty block scalars decline.
func (p *parser) blockScalar(i, parent int) {
	doc := p.doc
	literal := doc[i] == '|'
	j := i + 1
	chomp, increment := 0, 0
header: // each indicator at most once; a "0" or a second digit is left for restOfLine to decline
	for ; j < len(doc); j++ {
		switch c := doc[j]; {
		case chomp == 0 && (c == '+' || c == '-'):
			chomp = 1
			if c == '-' {
				chomp = -1
			}
		case increment == 0 && '1' <= c && c <= '9':
			increment = int(c - '0')
		default:
			break header
		}
	}
	// go-yaml: the content is indented by the indicator past the holder's indentation (parent is never
	// negative here: a block scalar is always a mapping's or a sequence's value)
	indent := 0
	if increment > 0 {
		indent = parent + increment
	}
	k := p.restOfLine(j) // the start of the line being read
	// leading empty lines: spaces up to the indentation are eaten (all of them when it is to be found);
	// without an indicator the indentation is the deepest of theirs and the first non-empty line's
	maxIndent, trailing := 0, 0
	at := k
	for {
		at = k
		for at < len(doc) && (indent == 0 || at-k < indent) && doc[at] == ' ' {
			at++
		}
		maxIndent = max(maxIndent, at-k)
		if at < len(doc) && doc[at] == '\n' {
			trailing++
			k = at + 1
			continue
		}
		break
	}
	if indent == 0 {
		indent = max(maxIndent, parent+1, 1)
	}
	// The scalar's text is escaped straight into the output, a line at a time (the escaping finds the line's end).
	out := append(p.out, '"')
	leadingBreak, leadingBlank, lines := false, false, 0
	for at-k == indent && at < len(doc) {
		trailingBlank := doc[at] == ' '
		if !literal && !leadingBlank && !trailingBlank && leadingBreak {
			if trailing == 0 {
				out = append(out, ' ')
			}
		} else if leadingBreak {
			out = append(out, `\n`...)
		}
		for ; trailing > 0; trailing-- {
			out = append(out, `\n`...)
		}
		leadingBlank = trailingBlank
		var n int
		if p.elide > 0 {
			n = p.lineEnd(at) - at
		} else {
			out, n = appendEscaped(out, doc[at:], true)
		}
		le := at + n
		lines++
		leadingBreak = le < len(doc)
		k = p.next(le)
		for {
			at = k
			for at < len(doc) && at-k < indent && doc[at] == ' ' {
				at++
			}
			if at < len(doc) && doc[at] == '\n' {
				trailing++
				k = at + 1
				continue
			}
			break
		}
	}
	if lines == 0 {
		decline()
	}
	if chomp != -1 && leadingBreak {
		out = append(out, `\n`...)
	}
	if chomp == 1 {
		for ; trailing > 0; trailing-- {
			out = append(out, `\n`...)
		}
	}
	if p.elide > 0 {
		out = append(out[:len(p.out)], '"') // nothing of the text: "" (see elide.go)
	}
	p.out = append(out, '"')
	p.pos = k
}
