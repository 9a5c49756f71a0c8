package diag

import "testing"

func TestDirNamesFilesUnderIt(t *testing.T) {
	for _, c := range []struct {
		name string
		dir  Dir
		rel  string
		want string
	}{
		{"zero", Dir{}, "a/b.json", "a/b.json"},
		{"dot", DirOf("."), "a/b.json", "a/b.json"},
		{"dir", DirOf("catalog"), "a/b.json", "catalog/a/b.json"},
		{"no file", DirOf("catalog"), "", ""},
		{"sub of zero", Dir{}.Sub("v4.16"), "a.json", "v4.16/a.json"},
		{"sub of dir", DirOf("catalogs").Sub("v4.16/"), "a.json", "catalogs/v4.16/a.json"},
		{"dot sub", DirOf("catalog").Sub("."), "a.json", "catalog/a.json"},
		{"lazy dot", LazyDir(func() string { return "." }).Sub("v4.16"), "a.json", "v4.16/a.json"},
		{"lazy", LazyDir(func() string { return "repo/sub" }), "a.json", "repo/sub/a.json"},
	} {
		if got := c.dir.File(c.rel); got != c.want {
			t.Errorf("%s: File(%q) = %q, want %q", c.name, c.rel, got, c.want)
		}
	}
}

// A lazy directory is resolved only when a diagnostic names a file, and once.
func TestLazyDirResolvesOnceAndOnlyForAFile(t *testing.T) {
	asked := 0
	d := LazyDir(func() string { asked++; return "top" })
	sub := d.Sub("v4.16")
	if got := sub.File(""); got != "" || asked != 0 {
		t.Fatalf("File(\"\") = %q after %d resolutions, want \"\" and none", got, asked)
	}
	for range 3 {
		if got := sub.File("x.json"); got != "top/v4.16/x.json" {
			t.Fatalf("File = %q", got)
		}
		d.File("y.json")
	}
	if asked != 1 {
		t.Fatalf("resolved %d times, want 1", asked)
	}
}
