package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/internal/reftools"
)

var updateWriteGolden = flag.Bool("update", false, "rewrite catalog/testdata/write goldens from the writer's output")

// writeTestInput is a small hand-made catalog exercising every ordering and normalisation rule.
const writeTestInput = "testdata/write/in"

// composedSample are packages of composed-279 compared with opm besides all of community-operators-prod-v4.20.
var composedSample = []string{"3scale-community-operator", "ack-acm-controller", "argocd-operator", "prometheus", "strimzi-kafka-operator"}

func writeTestOpm(t *testing.T) string {
	t.Helper()
	return reftools.OPM(t)
}

func loadForWrite(t testing.TB, dir string, opts LoadOptions) *Catalog {
	t.Helper()
	res, err := LoadDir(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Diagnostics {
		t.Errorf("unexpected diagnostic loading %s: %s", dir, d)
	}
	return res.Catalog
}

func writeString(t testing.TB, format string, c *Catalog) []byte {
	t.Helper()
	var buf bytes.Buffer
	write := WriteJSON
	if format == FormatYAML {
		write = WriteYAML
	}
	if err := write(&buf, c); err != nil {
		t.Fatalf("write %s: %v", format, err)
	}
	return buf.Bytes()
}

// sameBytes reports the first differing line of got and want (shortened around the first differing byte).
func sameBytes(t testing.TB, what string, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	i := 0
	for i < len(gl) && i < len(wl) && gl[i] == wl[i] {
		i++
	}
	line := func(ls []string) string {
		if i >= len(ls) {
			return "<end of output>"
		}
		s := ls[i]
		at := 0
		if i < len(gl) && i < len(wl) {
			for at < len(gl[i]) && at < len(wl[i]) && gl[i][at] == wl[i][at] {
				at++
			}
		}
		from, to := max(0, at-60), min(len(s), at+60)
		return fmt.Sprintf("%q", s[from:to])
	}
	t.Errorf("%s: %d bytes, want %d; first difference at line %d:\n got: %s\nwant: %s", what, len(got), len(want), i+1, line(gl), line(wl))
}

func packageDirs(t *testing.T, root string) []string {
	t.Helper()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join(root, e.Name()))
		}
	}
	return dirs
}

// TestWriteMatchesOpm renders catalogs with the reference opm and with the writer, in both formats, and
// requires identical bytes.
func TestWriteMatchesOpm(t *testing.T) {
	opm := writeTestOpm(t)
	dirs := []string{writeTestInput}
	dirs = append(dirs, packageDirs(t, sharedData(t, "catalogs", "community-operators-prod-v4.20"))...)
	for _, p := range composedSample {
		dirs = append(dirs, sharedData(t, "catalogs", "composed-279", p))
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			c := loadForWrite(t, dir, LoadOptions{})
			for _, format := range []string{FormatJSON, FormatYAML} {
				cmd := exec.CommandContext(t.Context(), opm, "render", dir, "-o", format)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				want, err := cmd.Output()
				if err != nil {
					t.Fatalf("opm render %s -o %s: %v\n%s", dir, format, err, stderr.Bytes())
				}
				sameBytes(t, format, writeString(t, format, c), want)
			}
		})
	}
}

// TestWriteGolden pins the writer's output for the hand-made catalog (regenerate with -update; the opm
// comparison above proves the goldens right).
func TestWriteGolden(t *testing.T) {
	c := loadForWrite(t, writeTestInput, LoadOptions{})
	for _, format := range []string{FormatJSON, FormatYAML} {
		got := writeString(t, format, c)
		golden := filepath.Join("testdata", "write", "golden."+format)
		if *updateWriteGolden {
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run with -update)", err)
		}
		sameBytes(t, golden, got, want)
	}

	out := filepath.Join(t.TempDir(), "out")
	if err := WriteDir(out, c, FormatJSON); err != nil {
		t.Fatal(err)
	}
	goldenDir := filepath.Join("testdata", "write", "dir")
	if *updateWriteGolden {
		if err := os.RemoveAll(goldenDir); err != nil {
			t.Fatal(err)
		}
		if err := os.CopyFS(goldenDir, os.DirFS(out)); err != nil {
			t.Fatal(err)
		}
	}
	got, want := readTree(t, out), readTree(t, goldenDir)
	if !slices.Equal(sortedKeys(got), sortedKeys(want)) {
		t.Fatalf("WriteDir wrote %v, want %v", sortedKeys(got), sortedKeys(want))
	}
	for name, w := range want {
		sameBytes(t, name, got[name], w)
	}
}

// readTree maps every file under root (slash paths) to its content.
func readTree(t testing.TB, root string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		files[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// cloneCatalog copies c deeply enough that any change the writer made to c would show.
func cloneCatalog(c *Catalog) *Catalog {
	props := func(ps []Property) []Property {
		out := slices.Clone(ps)
		for i := range out {
			out[i].Value = slices.Clone(out[i].Value)
		}
		return out
	}
	out := &Catalog{}
	for _, p := range c.Packages {
		q := *p
		q.Properties = props(p.Properties)
		out.Packages = append(out.Packages, &q)
	}
	for _, ch := range c.Channels {
		q := *ch
		q.Entries = slices.Clone(ch.Entries)
		q.Properties = props(ch.Properties)
		out.Channels = append(out.Channels, &q)
	}
	for _, b := range c.Bundles {
		q := *b
		q.Properties = props(b.Properties)
		q.RelatedImages = slices.Clone(b.RelatedImages)
		out.Bundles = append(out.Bundles, &q)
	}
	for _, d := range c.Deprecations {
		q := *d
		q.Entries = slices.Clone(d.Entries)
		out.Deprecations = append(out.Deprecations, &q)
	}
	for _, o := range c.Others {
		q := *o
		q.Blob = slices.Clone(o.Blob)
		out.Others = append(out.Others, &q)
	}
	return out
}

func reversed[T any](s []T) []T {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}

var realCatalog struct {
	once sync.Once
	res  *Result
	err  error
}

// realWriteCatalog is community-operators-prod-v4.20, loaded once for the tests that only read it.
func realWriteCatalog(t testing.TB) *Catalog {
	t.Helper()
	dir := sharedData(t, "catalogs", "community-operators-prod-v4.20")
	realCatalog.once.Do(func() {
		realCatalog.res, realCatalog.err = LoadDir(context.Background(), dir, LoadOptions{})
	})
	if realCatalog.err != nil {
		t.Fatal(realCatalog.err)
	}
	for _, d := range realCatalog.res.Diagnostics {
		t.Errorf("unexpected diagnostic loading %s: %s", dir, d)
	}
	return realCatalog.res.Catalog
}

// TestWriteDeterministic: the same catalog always gives the same bytes, whatever order its blobs were
// read in, and writing never changes the catalog. (YAML is a pure function of each blob's JSON, so the
// real catalog is checked in JSON only.)
func TestWriteDeterministic(t *testing.T) {
	cases := []struct {
		name    string
		c       *Catalog
		formats []string
	}{
		{"hand-made", loadForWrite(t, writeTestInput, LoadOptions{}), []string{FormatJSON, FormatYAML}},
		{"community-operators-prod-v4.20", realWriteCatalog(t), []string{FormatJSON}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			before := cloneCatalog(c)
			for _, format := range tc.formats {
				first := writeString(t, format, c)
				sameBytes(t, format+" second write", writeString(t, format, c), first)
				shuffled := &Catalog{Packages: reversed(c.Packages), Channels: reversed(c.Channels), Bundles: reversed(c.Bundles),
					Deprecations: reversed(c.Deprecations), Others: c.Others}
				sameBytes(t, format+" of the catalog read in reverse order", writeString(t, format, shuffled), first)
			}
			if !reflect.DeepEqual(c, before) {
				t.Error("writing changed the catalog")
			}
		})
	}
}

// clearPositions zeroes every position, which differ between a catalog and its rewrite.
func clearPositions(c *Catalog) {
	for _, p := range c.Packages {
		p.Pos = Pos{}
	}
	for _, ch := range c.Channels {
		ch.Pos = Pos{}
		for i := range ch.Entries {
			ch.Entries[i].Pos = Pos{}
		}
	}
	for _, b := range c.Bundles {
		b.Pos = Pos{}
	}
	for _, d := range c.Deprecations {
		d.Pos = Pos{}
	}
	for _, o := range c.Others {
		o.Pos = Pos{}
	}
}

// TestWriteDirRoundTrip: a written directory has opm's layout and loads back to the same catalog (the
// same canonical bytes); for the hand-made catalog, rewriting that is a fixed point, files and all.
func TestWriteDirRoundTrip(t *testing.T) {
	cases := []struct {
		name     string
		c        *Catalog
		fixpoint bool
	}{
		{"hand-made", loadForWrite(t, writeTestInput, LoadOptions{}), true},
		{"community-operators-prod-v4.20", realWriteCatalog(t), false},
	}
	for _, tc := range cases {
		want := writeString(t, FormatJSON, tc.c)
		groups, rootOthers := groupByPackage(tc.c)
		for _, format := range []string{FormatJSON, FormatYAML} {
			t.Run(tc.name+"/"+format, func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "catalog")
				if err := WriteDir(out, tc.c, format); err != nil {
					t.Fatal(err)
				}
				var layout []string
				for _, g := range groups {
					layout = append(layout, g.name+"/catalog."+format)
				}
				if len(rootOthers) > 0 {
					layout = append(layout, "catalog."+format)
				}
				slices.Sort(layout)
				files := readTree(t, out)
				if got := sortedKeys(files); !slices.Equal(got, layout) {
					t.Fatalf("wrote %v, want %v", got, layout)
				}
				back := loadForWrite(t, out, LoadOptions{})
				sameBytes(t, "reloaded catalog", writeString(t, FormatJSON, back), want)
				if !tc.fixpoint {
					return
				}
				again := filepath.Join(t.TempDir(), "again")
				if err := WriteDir(again, back, format); err != nil {
					t.Fatal(err)
				}
				rewritten := readTree(t, again)
				if !slices.Equal(sortedKeys(rewritten), sortedKeys(files)) {
					t.Fatalf("rewrote %v, want %v", sortedKeys(rewritten), sortedKeys(files))
				}
				for name, data := range rewritten {
					sameBytes(t, "rewritten "+name, data, files[name])
				}
				backAgain := loadForWrite(t, again, LoadOptions{})
				clearPositions(back)
				clearPositions(backAgain)
				if !reflect.DeepEqual(back, backAgain) {
					t.Error("a rewritten catalog does not load back equal")
				}
			})
		}
	}
}

// siblings lists the names in dir's parent other than dir itself (temporary directories left behind).
func siblings(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.Name() != filepath.Base(dir) {
			names = append(names, e.Name())
		}
	}
	return names
}

func TestWriteDirReplacesExisting(t *testing.T) {
	c := loadForWrite(t, writeTestInput, LoadOptions{})
	out := filepath.Join(t.TempDir(), "catalog")
	if err := os.MkdirAll(filepath.Join(out, "stale"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "stale", "catalog.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteDir(out, c, FormatYAML); err != nil {
		t.Fatal(err)
	}
	files := readTree(t, out)
	if _, ok := files["stale/catalog.json"]; ok {
		t.Error("the previous content survived the rewrite")
	}
	if _, ok := files["zeta/catalog.yaml"]; !ok {
		t.Errorf("zeta/catalog.yaml missing; wrote %v", sortedKeys(files))
	}
	if s := siblings(t, out); len(s) > 0 {
		t.Errorf("left behind %v", s)
	}
}

// TestWriteDirFailureKeepsTarget: whatever goes wrong, the target keeps its old content and no temporary
// directory is left behind.
func TestWriteDirFailureKeepsTarget(t *testing.T) {
	good := loadForWrite(t, writeTestInput, LoadOptions{})
	badName := cloneCatalog(good)
	badName.Packages[0].Name = "../escape"
	// the last package written holds a blob opm could not read either (a number beyond float64)
	badBlob := cloneCatalog(good)
	badBlob.Others = append(badBlob.Others, &Meta{Schema: "x.big", Package: "zzz", Blob: json.RawMessage(`{"schema":"x.big","package":"zzz","n":1e400}`)})
	cases := []struct {
		name   string
		c      *Catalog
		format string
		file   bool // the target is a regular file
		cat    diag.Category
	}{
		{name: "unknown format", c: good, format: "toml", cat: diag.Usage},
		{name: "package name not a directory name", c: badName, format: FormatJSON, cat: diag.Invalid},
		{name: "undecodable blob in the last package", c: badBlob, format: FormatJSON, cat: diag.Invalid},
		{name: "target is a file", c: good, format: FormatJSON, file: true, cat: diag.Usage},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "catalog")
			if tc.file {
				if err := os.WriteFile(out, []byte("keep"), 0o644); err != nil {
					t.Fatal(err)
				}
			} else if err := WriteDir(out, good, FormatYAML); err != nil {
				t.Fatal(err)
			}
			var before map[string][]byte
			if !tc.file {
				before = readTree(t, out)
			}
			err := WriteDir(out, tc.c, tc.format)
			if err == nil {
				t.Fatal("WriteDir succeeded")
			}
			if got := diag.CategoryOf(err); got != tc.cat {
				t.Errorf("error %q has category %s, want %s", err, got, tc.cat)
			}
			if !strings.Contains(err.Error(), out) {
				t.Errorf("error %q does not name the directory", err)
			}
			if tc.file {
				if data, err := os.ReadFile(out); err != nil || string(data) != "keep" {
					t.Errorf("the file was changed: %q, %v", data, err)
				}
			} else {
				after := readTree(t, out)
				if !reflect.DeepEqual(before, after) {
					t.Errorf("the directory changed: %v became %v", sortedKeys(before), sortedKeys(after))
				}
			}
			if s := siblings(t, out); len(s) > 0 {
				t.Errorf("left behind %v", s)
			}
		})
	}
}

// TestWriteRefusesLeanCatalog: a lean load drops bundle objects and other blobs; writing it must fail,
// not silently write nulls.
func TestWriteRefusesLeanCatalog(t *testing.T) {
	lean := loadForWrite(t, writeTestInput, LoadOptions{Lean: true})
	for _, format := range []string{FormatJSON, FormatYAML} {
		write := WriteJSON
		if format == FormatYAML {
			write = WriteYAML
		}
		var buf bytes.Buffer
		err := write(&buf, lean)
		if err == nil || !strings.Contains(err.Error(), "lean") {
			t.Errorf("%s: writing a lean catalog: %v, want an error about the lean load", format, err)
		}
	}
}

// canonicalReference is what opm does to a value: encoding/json into Go's generic values and back.
func canonicalReference(raw []byte) ([]byte, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

var canonicalCases = []string{
	`{}`, `[]`, `""`, `true`, `false`, `null`, ` {"b" : [ 1 , 2 ] ,"a":{ } } `,
	`{"b":1,"a":2,"c":{"z":null,"y":[{"k":"v","j":"w"}]}}`,
	`{"a":1,"a":2}`, `{"a":1,"b":0,"a":3}`, `{"\u0061":1,"a":2}`, `{"a":1,"\u0061":2}`,
	`{"é":1,"z":2,"Z":3,"\u00e9\u0301":4,"":5}`, `{"<k>":"&"}`, `{"k\"q":1,"k\\b":2}`,
	`"plain"`, `"\u003chtml\u003e \u0026"`, `"\/slash"`, `"\b\f\n\r\t\u0001\u001f"`, `"\ud83d\ude00"`,
	`"\ud800 lone"`, `"\udc00"`, "\"bad \xff utf8\"", "\"\xe2\x80\xa8 and \xe2\x80\xa9\"", `"\u2028"`,
	"\"caf\xc3\xa9\"", `"\u00e9"`,
	`0`, `-0`, `1`, `-1`, `1.0`, `1.50`, `1e3`, `1E+3`, `-1.25e2`, `123456789012345`, `1234567890123456`,
	`9007199254740993`, `12345678901234567890`, `1e21`, `1e20`, `0.000001`, `0.0000001`, `1e-7`, `5e-324`,
	`1.7976931348623157e308`, `1e400`, `-1e400`, `0.1`, `100000000000000000000000`,
	`{"a":1}x`, `{"a":}`, `[1,]`, `01`, `"unterminated`, ``, ` `, `nul`, `{"a" 1}`, `[1 2]`,
}

// TestCanonicalJSONMatchesEncodingJSON: the fast canonicaliser gives encoding/json's bytes (and fails
// where it fails) on tricky values and on every property value and blob of the real catalog.
func TestCanonicalJSONMatchesEncodingJSON(t *testing.T) {
	check := func(raw []byte) {
		t.Helper()
		want, werr := canonicalReference(raw)
		got, gerr := canonicalJSON(raw)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%q: encoding/json error %v, canonicalJSON error %v", raw, werr, gerr)
		}
		if werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("%q: canonicalJSON gave %q, encoding/json %q", raw, got, want)
		}
	}
	for _, raw := range canonicalCases {
		check([]byte(raw))
	}
	values := 0
	for _, c := range []*Catalog{loadForWrite(t, writeTestInput, LoadOptions{}), realWriteCatalog(t)} {
		for _, p := range c.Packages {
			for _, pr := range p.Properties {
				check(pr.Value)
				values++
			}
		}
		for _, ch := range c.Channels {
			for _, pr := range ch.Properties {
				check(pr.Value)
				values++
			}
		}
		for _, b := range c.Bundles {
			for _, pr := range b.Properties {
				check(pr.Value)
				values++
			}
		}
		for _, o := range c.Others {
			check(o.Blob)
			values++
		}
	}
	t.Logf("%d values checked", values)
}

func FuzzCanonicalJSON(f *testing.F) {
	for _, raw := range canonicalCases {
		f.Add([]byte(raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		want, werr := canonicalReference(raw)
		got, gerr := canonicalJSON(raw)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%q: encoding/json error %v, canonicalJSON error %v", raw, werr, gerr)
		}
		if werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("%q: canonicalJSON gave %q, encoding/json %q", raw, got, want)
		}
	})
}

func benchmarkWrite(b *testing.B, write func(io.Writer, *Catalog) error) {
	c := realWriteCatalog(b)
	var n int64
	for b.Loop() {
		cw := &countingWriter{}
		if err := write(cw, c); err != nil {
			b.Fatal(err)
		}
		n = cw.n
	}
	b.SetBytes(n)
}

type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

func BenchmarkWriteJSON(b *testing.B) { benchmarkWrite(b, WriteJSON) }
func BenchmarkWriteYAML(b *testing.B) { benchmarkWrite(b, WriteYAML) }

// TestWriteEmptyVersusMissingEntries: opm writes a channel's or deprecation's entries as [] when the file
// had an empty list and as null when it had none; the writer does the same from the model (nil is null).
func TestWriteEmptyVersusMissingEntries(t *testing.T) {
	c := &Catalog{
		Packages: []*Package{{Schema: SchemaPackage, Name: "p", DefaultChannel: "a"}},
		Channels: []*Channel{
			{Schema: SchemaChannel, Package: "p", Name: "b"},
			{Schema: SchemaChannel, Package: "p", Name: "a", Entries: []ChannelEntry{}},
		},
		Deprecations: []*Deprecation{{Schema: SchemaDeprecations, Package: "p", Entries: []DeprecationEntry{}}},
	}
	got := writeString(t, FormatJSON, c)
	want := `{
    "schema": "olm.package",
    "name": "p",
    "defaultChannel": "a"
}
{
    "schema": "olm.channel",
    "name": "a",
    "package": "p",
    "entries": []
}
{
    "schema": "olm.channel",
    "name": "b",
    "package": "p",
    "entries": null
}
{
    "schema": "olm.deprecations",
    "package": "p",
    "entries": []
}
`
	sameBytes(t, "writer", got, []byte(want))
	if os.Getenv("CATALOGBOT_OPM") == "" && os.Getenv("CATALOGBOT_REQUIRE_TOOLS") != "1" {
		return
	}
	dir := filepath.Join(t.TempDir(), "p")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	in := `{"schema":"olm.package","name":"p","defaultChannel":"a"}
{"schema":"olm.channel","package":"p","name":"a","entries":[]}
{"schema":"olm.channel","package":"p","name":"b"}
{"schema":"olm.deprecations","package":"p","entries":[]}
`
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	opmOut, err := exec.CommandContext(t.Context(), writeTestOpm(t), "render", filepath.Dir(dir), "-o", "json").Output()
	if err != nil {
		t.Fatal(err)
	}
	sameBytes(t, "opm", opmOut, []byte(want))
}

func TestWriteNilCatalogIsEmpty(t *testing.T) {
	for _, format := range []string{FormatJSON, FormatYAML} {
		if got := writeString(t, format, nil); len(got) != 0 {
			t.Errorf("%s of a nil catalog: %q", format, got)
		}
	}
	out := filepath.Join(t.TempDir(), "empty")
	if err := WriteDir(out, nil, FormatJSON); err != nil {
		t.Fatal(err)
	}
	if files := readTree(t, out); len(files) != 0 {
		t.Errorf("WriteDir of a nil catalog wrote %v", sortedKeys(files))
	}
}
