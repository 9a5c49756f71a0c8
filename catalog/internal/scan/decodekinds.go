package scan

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// The steps of decodeValue, one per kind of target: each decodes (or, v not valid, only checks) the value
// at data[i], which is not null, and returns the offset after it.

// decodeRaw delimits a json.RawMessage field's value (lazily, when the codec says the value is checked
// later) and keeps its bytes.
func decodeRaw(data []byte, i int, c *codec, v reflect.Value, depth int) (int, error) {
	var end int
	var err error
	if c.lazyRaw {
		end, err = delimitRaw(data, i)
	} else {
		end, err = SkipValue(data, i, max(depth, 0))
	}
	if err == nil && v.IsValid() {
		v.SetBytes(data[i:end])
	}
	return end, err
}

// decodeUnmarshaler hands the value's bytes to the type's UnmarshalJSON (on a throw-away value in
// check-only mode); its error is a type error at the value.
func decodeUnmarshaler(data []byte, i int, c *codec, v reflect.Value, depth int) (int, error) {
	end, err := SkipValue(data, i, max(depth, 0))
	if err != nil {
		return end, err
	}
	target := v
	if !target.IsValid() {
		target = reflect.New(c.t).Elem()
	}
	if err := target.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(data[i:end]); err != nil {
		return end, &TypeError{Off: i, cause: err}
	}
	return end, nil
}

func decodeString(data []byte, i int, c *codec, v reflect.Value, depth int) (int, error) {
	if data[i] != '"' {
		return mismatch(data, i, c, depth)
	}
	end, esc, err := ScanString(data, i)
	if err == nil && v.IsValid() {
		v.SetString(StringValue(data, i, end, esc))
	}
	return end, err
}

func decodeBool(data []byte, i int, c *codec, v reflect.Value, depth int) (int, error) {
	switch data[i] {
	case 't':
		if v.IsValid() {
			v.SetBool(true)
		}
		return ScanLiteral(data, i, "true")
	case 'f':
		if v.IsValid() {
			v.SetBool(false)
		}
		return ScanLiteral(data, i, "false")
	}
	return mismatch(data, i, c, depth)
}

// decodeInteger takes a number without fraction or exponent that fits the (signed or unsigned) integer
// type; any other value is a type mismatch, as in encoding/json.
func decodeInteger(data []byte, i int, c *codec, v reflect.Value, depth int) (int, error) {
	if KindAt(data, i) != "number" {
		return mismatch(data, i, c, depth)
	}
	end, err := ScanNumber(data, i)
	if err != nil {
		return end, err
	}
	n, ok := jsonInt(data[i:end])
	signed := c.kind >= reflect.Int && c.kind <= reflect.Int64
	if !ok || signed && reflect.Zero(c.t).OverflowInt(n) || !signed && (n < 0 || reflect.Zero(c.t).OverflowUint(uint64(n))) {
		return mismatch(data, i, c, depth)
	}
	if v.IsValid() {
		if signed {
			v.SetInt(n)
		} else {
			v.SetUint(uint64(n))
		}
	}
	return end, nil
}

func decodeFloat(data []byte, i int, c *codec, v reflect.Value, depth int) (int, error) {
	if KindAt(data, i) != "number" {
		return mismatch(data, i, c, depth)
	}
	end, err := ScanNumber(data, i)
	if err != nil {
		return end, err
	}
	f, perr := strconv.ParseFloat(string(data[i:end]), c.t.Bits())
	if perr != nil {
		return mismatch(data, i, c, depth)
	}
	if v.IsValid() {
		v.SetFloat(f)
	}
	return end, nil
}

// decodeSlice decodes an array element by element into the slice, grown in place; a []byte takes a base64
// string instead. A type error names the element's index.
func decodeSlice(data []byte, i int, c *codec, v reflect.Value, depth int) (int, error) {
	if c.bytes && data[i] == '"' {
		return decodeBase64(data, i, v)
	}
	if data[i] != '[' {
		return mismatch(data, i, c, depth)
	}
	if err := tooDeep(data, i, depth); err != nil {
		return i, err
	}
	if v.IsValid() {
		v.Set(c.empty) // [] is an empty slice, not nil, as in encoding/json
	}
	return IterArray(data, i, func(n int, at int) (int, error) {
		var elem reflect.Value
		if v.IsValid() {
			// grown in place (reflect.Append allocates a slice header for every element)
			if n == v.Cap() {
				v.Grow(1)
			}
			v.SetLen(n + 1)
			elem = v.Index(n)
		}
		end, err := decodeValue(data, at, c.elem, elem, inner(depth))
		if te, ok := err.(*TypeError); ok {
			te.field = "[" + strconv.Itoa(n) + "]" + strings.TrimPrefix("."+te.field, ".")
			if te.field[len(te.field)-1] == '.' {
				te.field = te.field[:len(te.field)-1]
			}
		}
		return end, err
	})
}

// decodeMap decodes an object with string keys into the map (made when nil), each value decoded on its
// own and set once it decoded. A type error names the key.
func decodeMap(data []byte, i int, c *codec, v reflect.Value, depth int) (int, error) {
	if data[i] != '{' || c.t.Key().Kind() != reflect.String {
		return mismatch(data, i, c, depth)
	}
	if err := tooDeep(data, i, depth); err != nil {
		return i, err
	}
	if v.IsValid() && v.IsNil() {
		v.Set(reflect.MakeMap(c.t))
	}
	return IterObject(data, i, func(ks, ke int, esc bool, at int) (int, error) {
		if !v.IsValid() {
			end, err := decodeValue(data, at, c.elem, reflect.Value{}, inner(depth))
			return end, inField(err, func() string { return StringValue(data, ks, ke, esc) })
		}
		key := StringValue(data, ks, ke, esc)
		elem := reflect.New(c.elem.t).Elem()
		end, err := decodeValue(data, at, c.elem, elem, inner(depth))
		if err == nil {
			v.SetMapIndex(reflect.ValueOf(key).Convert(c.t.Key()), elem)
		}
		return end, inField(err, func() string { return key })
	})
}
