package scan

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// node covers the shapes the decoder handles, a type that refers to itself included.
type node struct {
	Name    string            `json:"name"`
	Count   int32             `json:"count,omitempty"`
	Size    uint8             `json:"size,omitempty"`
	Ratio   float64           `json:"ratio,omitempty"`
	On      bool              `json:"on,omitempty"`
	Data    []byte            `json:"data,omitempty"`
	Raw     json.RawMessage   `json:"raw,omitempty"`
	Labels  map[string]string `json:"labels,omitempty"`
	Tags    []string          `json:"tags,omitempty"`
	Next    *node             `json:"next,omitempty"`
	Kids    []node            `json:"kids,omitempty"`
	Any     any               `json:"any,omitempty"`
	Ignored string            `json:"-"`
	embedded
}

type embedded struct {
	Extra []int `json:"extra,omitempty"`
}

// opmDecode is how opm reads a blob into its type: into a map, encoded again (keys sorted), then typed.
func opmDecode(data []byte, out *node) error {
	var m any
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	again, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return json.Unmarshal(again, out)
}

// FuzzDecodeMatchesOpm holds the decoder (and its check-only mode) to opm's reading of the same text:
// same acceptance, same values. The decoder works from per-type codecs built once (codecFor); this is
// what keeps them honest.
func FuzzDecodeMatchesOpm(f *testing.F) {
	for _, s := range []string{
		`{"name":"a","count":3,"size":255,"ratio":1.5,"on":true,"data":"aGk=","raw":{"x":[1,2]},"labels":{"k":"v"},"tags":["t"]}`,
		`{"name":"a","next":{"name":"b","next":{"name":"c","kids":[{"name":"d"},{"name":"e","next":null}]}}}`,
		`{"Name":"upper","name":"lower","NAME":"caps"}`,
		`{"count":1e2,"size":256}`, `{"count":2147483648}`, `{"count":1.5}`, `{"size":-1}`,
		`{"tags":[]}`, `{"tags":null}`, `{"kids":[]}`, `{"extra":[1,2,3],"EXTRA":[4]}`,
		`{"data":"not base64"}`, `{"name":"\u00e9\ud800"}`, `{"labels":{"k":1}}`, `{"kids":[{"count":"x"}]}`,
		`{"any":{"deep":[{"x":null}]},"unknown":{"a":[1,{"b":2}]}}`, `[1,2]`, `"text"`, `null`,
	} {
		f.Add([]byte(s))
	}
	// nesting past encoding/json's limit of 10,000, under a field the type does not name
	for _, depth := range []int{9998, 9999, 10000} {
		f.Add([]byte(`{"unknown":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want node
		wantErr := opmDecode(data, &want)
		i := SkipSpace(data, 0)
		if i >= len(data) {
			return
		}
		end, err := SkipValue(data, i, 0)
		if err != nil {
			if wantErr == nil {
				t.Fatalf("%q: syntax error %v, opm reads it", data, err)
			}
			return
		}
		if SkipSpace(data, end) != len(data) {
			return // more after the value: the loader's business, not the decoder's
		}
		var got node
		_, err = DecodeInto(data, i, &got)
		_, checkErr := CheckAs[node](data, i)
		if (err == nil) != (checkErr == nil) {
			t.Fatalf("%q: decode error %v, check-only error %v", data, err, checkErr)
		}
		if _, wholeErr := CheckWhole[node](data, i); (wholeErr == nil) != (checkErr == nil) {
			t.Fatalf("%q: check-only error %v, whole check's %v", data, checkErr, wholeErr)
		}
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("%q: decode error %v, opm's %v", data, err, wantErr)
		}
		if err != nil {
			return
		}
		// opm's RawMessage is re-encoded (compact, keys sorted); compare it by meaning
		rawEqual := func(a, b json.RawMessage) bool {
			var x, y any
			return (a == nil) == (b == nil) && (a == nil || json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y))
		}
		var walk func(a, b *node) bool
		walk = func(a, b *node) bool {
			if a == nil || b == nil {
				return a == b
			}
			if !rawEqual(a.Raw, b.Raw) || len(a.Kids) != len(b.Kids) || !walk(a.Next, b.Next) {
				return false
			}
			for k := range a.Kids {
				if !walk(&a.Kids[k], &b.Kids[k]) {
					return false
				}
			}
			x, y := *a, *b
			x.Raw, y.Raw, x.Next, y.Next, x.Kids, y.Kids = nil, nil, nil, nil, nil, nil
			x.Any, y.Any = nil, nil // an interface value is only checked (FBC types keep none)
			return reflect.DeepEqual(x, y)
		}
		if !walk(&got, &want) {
			t.Fatalf("%q: decoded\n%+v\nopm reads\n%+v", data, got, want)
		}
	})
}
