package catalog

import (
	"slices"
	"testing"
)

// Blobs yields every blob's package and position, by kind in the order the model keeps them, and stops
// when the loop does; PackageNames is built on it.
func TestBlobs(t *testing.T) {
	at := func(f string) Pos { return Pos{File: f, Line: 1} }
	c := &Catalog{
		Packages:     []*Package{{Name: "a", Pos: at("a.json")}},
		Channels:     []*Channel{{Package: "a", Pos: at("ch.json")}},
		Bundles:      []*Bundle{{Package: "b", Pos: at("b.json")}, {Package: "a", Pos: at("a2.json")}},
		Deprecations: []*Deprecation{{Package: "c", Pos: at("d.json")}},
		Others:       []*Meta{{Package: "", Pos: at("o.json")}},
	}
	var got []string
	for pkg, pos := range c.Blobs() {
		got = append(got, pkg+" "+pos.File)
	}
	want := []string{"a a.json", "a ch.json", "b b.json", "a a2.json", "c d.json", " o.json"}
	if !slices.Equal(got, want) {
		t.Errorf("Blobs yielded %q, want %q", got, want)
	}
	n := 0
	for range c.Blobs() {
		if n++; n == 3 {
			break
		}
	}
	if n != 3 {
		t.Errorf("the loop ran %d times after break at 3", n)
	}
	if names := c.PackageNames(); !slices.Equal(names, []string{"a", "b", "c"}) {
		t.Errorf("PackageNames = %q", names)
	}
}
