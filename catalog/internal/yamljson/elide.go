package yamljson

import "bytes"

// Elision: a caller that only checks the types of some values, never reads their strings, can have them
// written as "" (Options.ElideType). The strings are still read, as every scalar is, so a document
// converts or declines as it does without elision; only the escaping into JSON is saved, and the caller's
// scan of the longer JSON. A value is elided when it is the value of a mapping whose keys are exactly
// "type" then "value" (a catalog's property, as opm and go-yaml write it) and whose "type" is the string
// ElideType: every string in it, at any depth, becomes "" (keys, numbers, booleans and nulls stay as they
// are, so each value keeps its JSON type). A key after an elided value in the same mapping declines the
// document: a duplicate "type" or "value", or another spelling of one, could change what the value is.

// Options changes what a conversion writes.
type Options struct {
	// ElideType, when not empty, is the type of the tagged values whose strings are written as "".
	ElideType string
}

// taggedValue reports whether the entry e, whose key was just read, is the value to elide: the mapping
// whose entries start at p.ents[mark] holds only a "type" entry, whose JSON is `"type":"<ElideType>"`,
// and e's key is "value". Inside an elided value, nothing more is elided (all of it is already).
func (p *parser) taggedValue(mark int, e entry) bool {
	// (keys of other kinds are never written "type" or "value": see appendKey)
	if p.elideEntry == nil || p.elide > 0 || len(p.ents) != mark+1 || string(p.keys[e.keyFrom:e.keyTo]) != "value" {
		return false
	}
	t := p.ents[mark]
	return bytes.Equal(p.out[t.from:t.to], p.elideEntry)
}

// elideFor readies p for a document whose values of type typ are elided (none when typ is empty): the
// JSON of the "type" entry that tags them is kept from document to document while typ stays the same.
func (p *parser) elideFor(typ string) {
	p.elide, p.elided = 0, 0
	if typ != p.elideType {
		p.elideType, p.elideEntry = typ, nil
		if typ != "" {
			p.elideEntry = appendString(append(appendString(nil, []byte("type")), ':'), []byte(typ))
		}
	}
}
