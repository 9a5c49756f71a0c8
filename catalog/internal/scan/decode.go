package scan

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// A reflection-driven decoder over the validating scanner. It follows encoding/json's rules for the shapes
// FBC uses (struct fields by json tag, matched exactly then case-insensitively, the last duplicate wins,
// null leaves the target alone, []byte is base64, json.Unmarshaler is called), so what it accepts and
// rejects is what opm accepts and rejects. It can also check a value against a Go type without building
// it (check-only mode: an invalid reflect.Value), which is how large property values are validated.

// TypeError is a value of the wrong JSON kind for its Go type, at a byte offset.
type TypeError struct {
	Off   int
	field string // dotted path of JSON keys, "" at the top
	got   string // JSON kind, or "number 1.5"
	want  string // Go-ish description of the expected kind
	cause error
}

func (e *TypeError) Error() string {
	where := ""
	if e.field != "" {
		where = "field " + strconv.Quote(e.field) + ": "
	}
	if e.cause != nil {
		return where + e.cause.Error()
	}
	return fmt.Sprintf("%sexpected %s, got %s", where, e.want, e.got)
}

// ReusedBytes decodes as []byte does (base64), into the memory the field already holds when it has room:
// a caller that decodes one value after another into it reuses one buffer. encoding/json allocates anew.
type ReusedBytes []byte

var (
	reusedBytesType = reflect.TypeFor[ReusedBytes]()
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

type fieldInfo struct {
	name  string
	index []int
	c     *codec
}

type structInfo struct {
	fields []fieldInfo
	exact  map[string]int
}

// codec is what the decoder needs to know about a Go type, worked out once per type (reflection's
// method-set and field lookups cost more than the scanning they steer): the values of one type decode by
// following its codec, and its element's or fields' codecs, with no further lookups by type.
type codec struct {
	t           reflect.Type
	kind        reflect.Kind
	raw         bool // json.RawMessage: kept as its text
	lazyRaw     bool // raw values anywhere under this type are only delimited (FastSkip), not validated
	unmarshaler bool // *T implements json.Unmarshaler (T not a pointer)
	bytes       bool // a slice of bytes: base64 text
	elem        *codec
	st          *structInfo
	want        string        // describeType(t), for type errors
	empty       reflect.Value // a non-nil empty slice of the type (what [] decodes to)
}

// codecKey names a codec: a type, and whether its raw values are left unvalidated.
type codecKey struct {
	t       reflect.Type
	lazyRaw bool
}

var (
	// codecs holds the complete codecs, read without a lock on every decode (a catalog's load asks for
	// one per blob and property value: a sync.Map's lookup was 1-2% of validating v4.20) and replaced
	// whole, under codecMu, when a type's codecs are added, which happens a few dozen times per process.
	codecs    atomic.Pointer[map[codecKey]*codec]
	codecMu   sync.Mutex
	codecWork = map[codecKey]*codec{} // under codecMu: codecs being built (types may refer to themselves)
)

// codecFor returns the codec of t, building it (and its elements') on first use.
func codecFor(t reflect.Type, lazyRaw bool) *codec {
	k := codecKey{t, lazyRaw}
	if m := codecs.Load(); m != nil {
		if c, ok := (*m)[k]; ok {
			return c
		}
	}
	codecMu.Lock()
	defer codecMu.Unlock()
	c := buildCodec(k)
	if len(codecWork) > 0 {
		next := map[codecKey]*codec{}
		if m := codecs.Load(); m != nil {
			maps.Copy(next, *m)
		}
		maps.Copy(next, codecWork)
		codecs.Store(&next)
		clear(codecWork)
	}
	return c
}

func buildCodec(k codecKey) *codec {
	if m := codecs.Load(); m != nil {
		if c, ok := (*m)[k]; ok {
			return c
		}
	}
	if c, ok := codecWork[k]; ok {
		return c
	}
	t := k.t
	c := &codec{t: t, kind: t.Kind(), want: describeType(t), lazyRaw: k.lazyRaw}
	codecWork[k] = c
	c.raw = t == rawMessageType
	c.unmarshaler = t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(unmarshalerType)
	switch t.Kind() {
	case reflect.Pointer, reflect.Map:
		c.elem = buildCodec(codecKey{t.Elem(), k.lazyRaw})
	case reflect.Slice:
		c.bytes = t.Elem().Kind() == reflect.Uint8
		c.elem = buildCodec(codecKey{t.Elem(), k.lazyRaw})
		c.empty = reflect.MakeSlice(t, 0, 0)
	case reflect.Struct:
		c.st = structFields(k)
	}
	return c
}

func structFields(k codecKey) *structInfo {
	si := &structInfo{exact: map[string]int{}}
	var walk func(t reflect.Type, index []int)
	walk = func(t reflect.Type, index []int) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			idx := append(append([]int(nil), index...), i)
			if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
				walk(f.Type, idx)
				continue
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if _, dup := si.exact[name]; dup {
				continue
			}
			si.exact[name] = len(si.fields)
			si.fields = append(si.fields, fieldInfo{name: name, index: idx, c: buildCodec(codecKey{f.Type, k.lazyRaw})})
		}
	}
	walk(k.t, nil)
	return si
}

// linearFields is the most fields a struct's exact lookup compares one by one instead of hashing the
// key: a catalog's structs have 2 to 15, its keys are short, and most differ from a field's name in
// length.
const linearFields = 16

// lookup returns the index of the field key names (exactly, else case-insensitively), or -1.
func (si *structInfo) lookup(key []byte) int {
	if len(si.fields) <= linearFields {
		for i := range si.fields {
			if si.fields[i].name == string(key) {
				return i
			}
		}
	} else if i, ok := si.exact[string(key)]; ok {
		return i
	}
	for i, f := range si.fields {
		if bytes.EqualFold([]byte(f.name), key) {
			return i
		}
	}
	return -1
}

// inField prefixes a type error's field path with the name of the field or key it happened in; the
// name is computed only on the error path.
func inField(err error, name func() string) error {
	te, ok := err.(*TypeError)
	if !ok {
		return err
	}
	if te.field == "" {
		te.field = name()
	} else if te.field[0] == '[' {
		te.field = name() + te.field
	} else {
		te.field = name() + "." + te.field
	}
	return err
}

func describeType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "base64 string"
		}
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	case reflect.Pointer:
		return describeType(t.Elem())
	}
	return t.String()
}

// decodeValue decodes the value at data[i] into v, a settable value of c's type, or only checks it when v
// is not valid. It returns the offset after the value. It validates what it reads (a value not checked
// before, or cut short, is a syntax error), but reports a type error before a syntax error further on.
//
// depth is the value's nesting in the text where encoding/json's limit counts from (MaxDepth applies to
// what it skips or decodes), or untracked (-1): each value it skips is then limited on its own.
func decodeValue(data []byte, i int, c *codec, v reflect.Value, depth int) (int, error) {
	if i >= len(data) {
		return i, ErrAt(data, i, "looking for beginning of value")
	}
	switch {
	case c.raw:
		return decodeRaw(data, i, c, v, depth)
	case c.unmarshaler:
		return decodeUnmarshaler(data, i, c, v, depth)
	case data[i] == 'n':
		return ScanLiteral(data, i, "null")
	}
	switch c.kind {
	case reflect.Pointer:
		var elem reflect.Value
		if v.IsValid() {
			if v.IsNil() {
				v.Set(reflect.New(c.elem.t))
			}
			elem = v.Elem()
		}
		return decodeValue(data, i, c.elem, elem, depth)
	case reflect.Interface:
		return SkipValue(data, i, max(depth, 0))
	case reflect.String:
		return decodeString(data, i, c, v, depth)
	case reflect.Bool:
		return decodeBool(data, i, c, v, depth)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return decodeInteger(data, i, c, v, depth)
	case reflect.Float32, reflect.Float64:
		return decodeFloat(data, i, c, v, depth)
	case reflect.Slice:
		return decodeSlice(data, i, c, v, depth)
	case reflect.Map:
		return decodeMap(data, i, c, v, depth)
	case reflect.Struct:
		return decodeStruct(data, i, c, v, nil, depth)
	}
	return mismatch(data, i, c, depth)
}

// decodeStruct decodes the object at data[i] into v (a struct of c's type; only checked when not valid),
// calling seen, when set, with each key and the offset of its value before the value is read: an error
// from seen ends the decode with that error, and an end >= 0 says seen read the value itself (the field is
// left alone).
func decodeStruct(data []byte, i int, c *codec, v reflect.Value, seen func(ks, ke int, esc bool, at int) (int, error), depth int) (int, error) {
	if data[i] != '{' {
		return mismatch(data, i, c, depth)
	}
	if err := tooDeep(data, i, depth); err != nil {
		return i, err
	}
	si := c.st
	// opm decodes every blob into a map and re-encodes it before the typed decode, so of several keys
	// naming one field (case-insensitively) the one sorting last wins, not the last in the file. The
	// winning keys are slices of data (or of their unescaped copy), so keeping them costs nothing.
	var winners [][]byte
	var room [8][]byte
	if v.IsValid() {
		if len(si.fields) <= len(room) {
			winners = room[:len(si.fields)]
		} else {
			winners = make([][]byte, len(si.fields))
		}
	}
	return IterObject(data, i, func(ks, ke int, esc bool, at int) (int, error) {
		if seen != nil {
			if end, err := seen(ks, ke, esc, at); err != nil || end >= 0 {
				return max(end, at), err
			}
		}
		key := data[ks+1 : ke-1]
		if esc {
			key = []byte(StringValue(data, ks, ke, esc))
		}
		k := si.lookup(key)
		if k < 0 {
			return SkipValue(data, at, max(inner(depth), 0))
		}
		f := &si.fields[k]
		var fv reflect.Value
		if v.IsValid() {
			if w := &winners[k]; *w == nil || bytes.Compare(key, *w) >= 0 {
				*w = key
				fv = v.FieldByIndex(f.index)
			}
		}
		end, err := decodeValue(data, at, f.c, fv, inner(depth))
		return end, inField(err, func() string { return f.name })
	})
}

// mismatch reports the value at data[i] as the wrong kind for c's type (after checking its syntax).
func mismatch(data []byte, i int, c *codec, depth int) (int, error) {
	end, err := SkipValue(data, i, max(depth, 0))
	if err != nil {
		return end, err
	}
	got := KindAt(data, i)
	if got == "number" {
		got = "number " + string(data[i:end])
	}
	return end, &TypeError{Off: i, got: got, want: c.want}
}

// decodeBase64 decodes a JSON string into a []byte the way encoding/json does (standard encoding, padded;
// CR and LF ignored).
func decodeBase64(data []byte, i int, v reflect.Value) (int, error) {
	end, esc, err := ScanString(data, i)
	if err != nil {
		return end, err
	}
	// the literal's bytes are the string's unless it has escapes or invalid UTF-8 (which StringValue
	// rewrites); base64 text has neither, so it is decoded in place, without two copies of it
	raw := data[i+1 : end-1]
	if esc || !utf8.Valid(raw) {
		raw = []byte(StringValue(data, i, end, esc))
	}
	var b []byte
	if need := base64.StdEncoding.DecodedLen(len(raw)); v.IsValid() && v.Type() == reusedBytesType && v.Cap() >= need {
		b = v.Bytes()[:need]
	} else {
		b = make([]byte, need)
	}
	n, derr := base64.StdEncoding.Decode(b, raw)
	if derr != nil {
		return end, &TypeError{Off: i, cause: fmt.Errorf("invalid base64 data: %w", derr)}
	}
	if v.IsValid() {
		v.SetBytes(b[:n])
	}
	return end, nil
}

// DecodeInto decodes the value at data[i] into *out.
func DecodeInto[T any](data []byte, i int, out *T) (int, error) {
	return decodeValue(data, i, codecFor(reflect.TypeFor[T](), false), reflect.ValueOf(out).Elem(), -1)
}

// DecodeObjectInto decodes the object at data[i] into *out, a struct, as DecodeInto does, calling seen with
// each of the object's keys (the literal's span, whether it has escapes) and its value's offset before
// reading the value; an error from seen stops the decode and is returned. A caller that must look at every
// key of a blob (duplicates, identity) reads the blob once instead of twice. When seen returns an end >= 0,
// it has read the value (data[val:end]) itself, and the field it names is not set.
//
// Raw values (json.RawMessage) are only delimited, not validated: the caller must check each one it keeps
// (CheckRaw, or a decode of the whole value) before trusting the blob, as a syntax error inside one is
// found there. Everything else is validated as DecodeInto validates it.
func DecodeObjectInto[T any](data []byte, i int, out *T, seen func(keyStart, keyEnd int, escaped bool, val int) (end int, err error)) (int, error) {
	c := codecFor(reflect.TypeFor[T](), true)
	if c.kind != reflect.Struct {
		panic("scan.DecodeObjectInto: " + c.t.String() + " is not a struct")
	}
	if data[i] == 'n' {
		return ScanLiteral(data, i, "null")
	}
	return decodeStruct(data, i, c, reflect.ValueOf(out).Elem(), seen, -1)
}

// delimitRaw finds the end of the raw value at data[i] the way FastSkip does over the whole blob (metaKeys'
// pass), so the one pass and the two find the same values: a string or a container is only delimited; a
// scalar, short, is validated (FastSkip would run a bad one into what follows); a container nested deeper
// than MaxDepth is an error (the validating skip refuses it).
func delimitRaw(data []byte, i int) (int, error) {
	switch data[i] {
	case '"':
		return FastSkip(data, i)
	case '{', '[':
		end, deepest, err := fastSkipDepth(data, i)
		if err == nil && deepest > MaxDepth {
			return i, &SyntaxError{Off: i, Msg: "exceeded max depth"}
		}
		return end, err
	}
	return SkipValue(data, i, 0)
}

// DelimitRaw finds the end of the value at data[i] as DecodeObjectInto does for a raw value: only
// delimited when a string or a container (the caller must validate it), validated when a scalar.
func DelimitRaw(data []byte, i int) (int, error) {
	if i >= len(data) {
		return i, ErrAt(data, i, "looking for beginning of value")
	}
	return delimitRaw(data, i)
}

// CheckRaw validates raw, a value delimited by FastSkip (see DecodeObjectInto): it must be exactly one
// JSON value. The error's offset is in raw.
func CheckRaw(raw []byte) error {
	end, err := SkipValue(raw, 0, 0)
	if err == nil && end != len(raw) {
		err = ErrAt(raw, end, "after top-level value")
	}
	return err
}

// CheckAs checks the value at data[i] against type T without building it.
func CheckAs[T any](data []byte, i int) (int, error) {
	return decodeValue(data, i, codecFor(reflect.TypeFor[T](), false), reflect.Value{}, -1)
}

// CheckWhole checks the value at data[i] against type T as CheckAs does, and also as a whole as a skip
// of it from depth 0 would: nested deeper than MaxDepth anywhere (where CheckAs limits each value it skips
// on its own) is an error.
func CheckWhole[T any](data []byte, i int) (int, error) {
	return decodeValue(data, i, codecFor(reflect.TypeFor[T](), false), reflect.Value{}, 0)
}

// inner is the depth of the values inside a container at depth (untracked stays untracked).
func inner(depth int) int {
	if depth < 0 {
		return -1
	}
	return depth + 1
}

// tooDeep is the error for a container at depth (when tracked) deeper than encoding/json goes.
func tooDeep(data []byte, i, depth int) error {
	if depth >= MaxDepth {
		return &SyntaxError{Off: i, Msg: "exceeded max depth"}
	}
	return nil
}

// jsonInt reads a JSON number as opm ends up reading it: through a float64 (opm round-trips every blob
// through map[string]any), so 1e2 is the integer 100 and 1.5 is not an integer.
func jsonInt(num []byte) (int64, bool) {
	if n, err := strconv.ParseInt(string(num), 10, 64); err == nil && n > -1<<53 && n < 1<<53 {
		return n, true
	}
	f, err := strconv.ParseFloat(string(num), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) >= 1e21 {
		return 0, false
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}
