package filetree

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
)

func link(target string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte(target), Mode: fs.ModeSymlink | 0o777}
}

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s), Mode: 0o644} }

// onDisk writes m into a new directory (symbolic links as links) and returns the directory.
func onDisk(t *testing.T, m fstest.MapFS) string {
	t.Helper()
	dir := t.TempDir()
	for p, f := range m {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch {
		case f.Mode&fs.ModeSymlink != 0:
			err = os.Symlink(string(f.Data), full)
		case f.Mode.IsDir():
			err = os.MkdirAll(full, 0o755)
		default:
			err = os.WriteFile(full, f.Data, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// listBoth lists m as a git tree's file system (fstest.MapFS reports links as gitrepo.TreeFS does) and as
// a checked-out directory read through os.Root, and requires the same listing of both.
func listBoth(t *testing.T, m fstest.MapFS) *Listing {
	t.Helper()
	fromMap, err := ListCatalog(m)
	if err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(onDisk(t, m))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	fromDisk, err := ListCatalog(root.FS())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromMap, fromDisk) {
		t.Fatalf("a git tree and its checkout listed differently:\ntree     %+v\ncheckout %+v", fromMap, fromDisk)
	}
	return fromMap
}

func refusedPaths(l *Listing) []string {
	var out []string
	for _, r := range l.Refused {
		out = append(out, r.Path)
	}
	return out
}

func TestListCatalogIndexIgnoreAsOpmReadsIt(t *testing.T) {
	l := listBoth(t, fstest.MapFS{
		".indexignore":       file("# comments and blank lines are not patterns\n\n*.md\r\n/top.json\n"),
		"README.md":          file("x"),
		"top.json":           file("{}"),
		"foo/top.json":       file("{}"),
		"foo/catalog.json":   file("{}"),
		"foo/.indexignore":   file("notes/\n"),
		"foo/notes/a.json":   file("{}"),
		"bar/notes/a.json":   file("{}"),
		"bar/.indexignore/x": file("{}"), // a directory called .indexignore holds no patterns, and is loaded
		".git/config":        file("x"),
		"baz/.git":           file("gitdir: elsewhere"),
		"baz/docs/guide.md":  file("x"),
		"baz/catalog.yaml":   file("schema: olm.package"),
		"qux/目录.json":        file("{}"), // Latin with Han does not mix look-alikes
		"qux/caf\u00e9.json": file("{}"),
		"qux/\u043a\u0430\u0442\u0430\u043b\u043e\u0433.json": file("{}"), // a Cyrillic name with a Latin extension
	})
	if want := []string{"bar/.indexignore/x", "bar/notes/a.json", "baz/catalog.yaml", "foo/catalog.json", "foo/top.json", "qux/caf\u00e9.json", "qux/目录.json"}; !reflect.DeepEqual(l.Loaded, want) {
		t.Errorf("loaded %q, want %q", l.Loaded, want)
	}
	if want := []string{"README.md", "baz/docs/guide.md", "foo/notes/a.json", "top.json"}; !reflect.DeepEqual(l.Ignored, want) {
		t.Errorf("ignored %q, want %q", l.Ignored, want)
	}
	if len(l.Files) != len(l.Loaded)+len(l.Ignored)+2 {
		t.Errorf("files %q: want the loaded, the ignored and the two .indexignore files", l.Files)
	}
	if want := []string{"qux/\u043a\u0430\u0442\u0430\u043b\u043e\u0433.json"}; !reflect.DeepEqual(refusedPaths(l), want) {
		t.Errorf("refused %+v, want %q (Cyrillic letters with a Latin extension)", l.Refused, want)
	}
}

func TestListCatalogRefusesLinksAndLookAlikes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fsys    fstest.MapFS
		refused string
		reason  string
	}{
		{"link to an ignored file", fstest.MapFS{".indexignore": file("bar.json\n"), "bar.json": file("{}"), "foo/notes.json": link("../bar.json")},
			"foo/notes.json", `is a symbolic link (to "../bar.json")`},
		{"link to another package's directory", fstest.MapFS{"bar/catalog.json": file("{}"), "foo/bar": link("../bar")}, "foo/bar", "symbolic link"},
		{"dangling link", fstest.MapFS{"foo/catalog.json": link("/etc/passwd")}, "foo/catalog.json", "symbolic link"},
		{"a link as .indexignore", fstest.MapFS{"foo/catalog.json": file("{}"), ".indexignore": link("foo/catalog.json")}, ".indexignore", "symbolic link"},
		{"case", fstest.MapFS{"foo/Catalog.json": file("{}"), "foo/catalog.json": file("{}")}, "foo/catalog.json", "differs from foo/Catalog.json only in case"},
		{"case of a directory", fstest.MapFS{"Foo/catalog.json": file("{}"), "foo/catalog.json": file("{}")}, "foo", "differs from Foo only in case"},
		{"fullwidth letter", fstest.MapFS{"foo/catalog.json": file("{}"), "foo/catalog.\uff4Ason": file("{}")}, "foo/catalog.\uff4Ason", "differs from foo/catalog.json"},
		{"decomposed", fstest.MapFS{"foo/caf\u00e9.json": file("{}"), "foo/cafe\u0301.json": file("{}")}, "foo/caf\u00e9.json", "differs from foo/cafe\u0301.json"},
		{"ligature", fstest.MapFS{"foo/\ufb01le.json": file("{}"), "foo/file.json": file("{}")}, "foo/\ufb01le.json", "differs from foo/file.json"},
		{"Kelvin sign", fstest.MapFS{"foo/\u212a.json": file("{}"), "foo/k.json": file("{}")}, "foo/\u212a.json", "differs from foo/k.json only in case"},
		{"Cyrillic look-alike", fstest.MapFS{"foo/c\u0430talog.json": file("{}")}, "foo/c\u0430talog.json", "mixes letters of the Cyrillic and Latin scripts"},
		{"Greek look-alike in a directory", fstest.MapFS{"f\u03bfo/catalog.json": file("{}")}, "f\u03bfo", "Greek and Latin"},
		{"zero-width space", fstest.MapFS{"foo/cat\u200balog.json": file("{}")}, "foo/cat\u200balog.json", "invisible character U+200B"},
		{"right-to-left override", fstest.MapFS{"foo/nosj.\u202egnp": file("{}")}, "foo/nosj.\u202egnp", "U+202E"},
		{"control character", fstest.MapFS{"foo/a\x01.json": file("{}")}, "foo/a\x01.json", "U+0001"},
		{"invalid UTF-8", fstest.MapFS{"foo/\xff.json": file("{}")}, "foo/\xff.json", "not valid UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := listBoth(t, tc.fsys)
			if len(l.Refused) != 1 || l.Refused[0].Path != tc.refused || !strings.Contains(l.Refused[0].Reason, tc.reason) || l.Refused[0].Hint == "" {
				t.Fatalf("refused %+v, want %s refused: %s", l.Refused, tc.refused, tc.reason)
			}
			for _, f := range append(append([]string{}, l.Files...), l.Dirs...) {
				if f == tc.refused || strings.HasPrefix(f, tc.refused+"/") {
					t.Errorf("the refused %s is listed: %+v", tc.refused, l)
				}
			}
		})
	}
}

func TestListCatalogRefusesSpecialFiles(t *testing.T) {
	dir := onDisk(t, fstest.MapFS{"foo/catalog.json": file("{}")})
	if err := syscall.Mkfifo(filepath.Join(dir, "foo", "pipe.json"), 0o644); err != nil {
		t.Skipf("NO NAMED PIPES HERE: %v", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	l, err := ListCatalog(root.FS())
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Refused) != 1 || l.Refused[0].Path != "foo/pipe.json" || !strings.Contains(l.Refused[0].Reason, "named pipe") {
		t.Fatalf("refused %+v, want foo/pipe.json as a named pipe", l.Refused)
	}
	if want := []string{"foo/catalog.json"}; !reflect.DeepEqual(l.Loaded, want) {
		t.Errorf("loaded %q, want %q", l.Loaded, want)
	}
}
