package catalog

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/diag"
)

// bigCatalog writes a package of n bundles (each with an inline bundle object of about objSize bytes) as
// JSON and as YAML, with a broken bundle every 50th and a channel at the end, into dir; it returns the
// size of the largest blob or document written. No file ends with blank space, so reading a file to its
// last blob reads all of it.
func bigCatalog(t *testing.T, dir string, n, objSize int) (largest int) {
	t.Helper()
	obj := base64.StdEncoding.EncodeToString([]byte(`{"kind":"ConfigMap","data":{"k":"` + strings.Repeat("v", objSize) + `"}}`))
	var js, yml strings.Builder
	var entries []string
	add := func(b *strings.Builder, blob string) {
		largest = max(largest, len(blob))
		b.WriteString(blob)
	}
	for i := range n {
		name := fmt.Sprintf("big.v0.0.%d", i)
		image := fmt.Sprintf("%q", "quay.io/example/big:v"+fmt.Sprint(i))
		if i%50 == 49 {
			image = "5" // a wrong type, reported at its offset inside the blob
		}
		add(&js, fmt.Sprintf(`{"schema":"olm.bundle","name":%q,"package":"big","image":%s,"properties":[{"type":"olm.package","value":{"packageName":"big","version":"0.0.%d"}},{"type":"olm.bundle.object","value":{"data":%q}}]}`+"\n",
			name, image, i, obj))
		add(&yml, fmt.Sprintf("---\nschema: olm.bundle\nname: %s\npackage: big\nimage: %s\nproperties:\n- type: olm.package\n  value:\n    packageName: big\n    version: 0.0.%d\n- type: olm.bundle.object\n  value:\n    data: %s\n",
			name, image, i, obj))
		entries = append(entries, name)
	}
	add(&js, `{"schema":"olm.package","name":"big","defaultChannel":"stable"}`+"\n")
	add(&yml, "---\nschema: olm.package\nname: big\ndefaultChannel: stable\n")
	var chJS, chYAML strings.Builder
	for i, e := range entries {
		fmt.Fprintf(&chJS, `{"name":%q`, e)
		fmt.Fprintf(&chYAML, "- name: %s\n", e)
		if i > 0 {
			fmt.Fprintf(&chJS, `,"replaces":%q`, entries[i-1])
			fmt.Fprintf(&chYAML, "  replaces: %s\n", entries[i-1])
		}
		chJS.WriteString("},\n")
	}
	add(&js, `{"schema":"olm.channel","name":"stable","package":"big","entries":[`+strings.TrimSuffix(chJS.String(), ",\n")+"]}")
	add(&yml, "---\nschema: olm.channel\nname: stable\npackage: big\nentries:\n"+chYAML.String())
	for name, text := range map[string]string{"json/catalog.json": js.String(), "yaml/catalog.yaml": yml.String()} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return largest
}

// readFS hides that its files are operating system files, so the loader reads them instead of mapping them.
type readFS struct{ fs.FS }

func (r readFS) Open(name string) (fs.File, error) {
	f, err := r.FS.Open(name)
	if err != nil {
		return nil, err
	}
	return struct{ fs.File }{f}, nil
}

func (r readFS) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(r.FS, name) }

// mapEverything maps every file of the loads the test makes.
func mapEverything(t *testing.T) {
	old := minMapped
	minMapped = 1
	t.Cleanup(func() { minMapped = old })
}

// A mapped file loads exactly as a read one: the same blobs, the same diagnostics at the same lines (line
// numbers are counted again from a base once the pages before it are given back), and nothing the catalog
// keeps points into the mapping, which is gone when the load returns (a full load keeps property values:
// comparing them would fault).
func TestMappedLoadMatchesRead(t *testing.T) {
	if !canMap {
		t.Skip("files are not mapped on this system")
	}
	mapEverything(t)
	synthetic := t.TempDir()
	bigCatalog(t, synthetic, 400, 6000)
	dirs := map[string]string{"synthetic": synthetic}
	if os.Getenv("CATALOGBOT_SHARED_DATA") != "" {
		for _, name := range []string{"community-operators-prod-v4.16", "community-operators-prod-v4.20", "composed-279"} {
			dirs[name] = sharedData(t, "catalogs", name)
		}
	}
	for name, dir := range dirs {
		t.Run(name, func(t *testing.T) {
			for _, lean := range []bool{false, true} {
				flight := &inFlight{}
				mapped, err := LoadDir(context.Background(), dir, LoadOptions{Lean: lean, flight: flight})
				if err != nil {
					t.Fatal(err)
				}
				read, err := LoadFS(context.Background(), readFS{os.DirFS(dir)}, LoadOptions{Lean: lean})
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(mapped.Catalog, read.Catalog) {
					t.Errorf("lean=%v: the mapped load's catalog differs from the read one's", lean)
				}
				if got, want := diagStrings(mapped.Diagnostics), diagStrings(read.Diagnostics); !reflect.DeepEqual(got, want) {
					t.Errorf("lean=%v: diagnostics differ:\nmapped %q\nread   %q", lean, got, want)
				}
				if name == "synthetic" && len(read.Diagnostics) != 16 {
					t.Errorf("want a diagnostic for each of the 16 broken bundles, got %d", len(read.Diagnostics))
				}
				if c := flight.cur.Load(); c != 0 {
					t.Errorf("the load ended holding %d bytes of file data", c)
				}
			}
		})
	}
}

func diagStrings(ds []diag.Diagnostic) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = fmt.Sprintf("%s:%d:%d %s", d.File, d.Line, d.Column, d)
	}
	return out
}

// The loader gives back a mapped file's pages as it goes: two workers on two files of several MB hold
// about one blob or document each, by the loader's own count of what it has read and not given back.
// The count must cover every byte of the files (a loader that stopped counting would hold nothing).
func TestLoaderHoldsAboutOneBlobPerWorker(t *testing.T) {
	if !canMap {
		t.Skip("files are not mapped on this system")
	}
	dir := t.TempDir()
	largest := bigCatalog(t, dir, 300, 6000)
	var total int64
	for _, f := range []string{"json/catalog.json", "yaml/catalog.yaml"} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() < 2<<20 {
			t.Fatalf("%s has %d bytes: too small for this test", f, st.Size())
		}
		total += st.Size()
	}
	if data, mapped, err := readCapped(os.DirFS(dir), "json/catalog.json", DefaultMaxFileSize, nil); err != nil || !mapped {
		t.Skipf("the test directory's files cannot be mapped here (%v)", err)
	} else {
		unmapFile(data)
	}
	oldStep := releaseStep
	releaseStep = 128 << 10 // the files are a few MB: given back in steps smaller than them
	t.Cleanup(func() { releaseStep = oldStep })
	const workers = 2
	flight := &inFlight{}
	res, err := LoadDir(context.Background(), dir, LoadOptions{Lean: true, Concurrency: workers, flight: flight})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Catalog.Bundles) != 2*(300-6) {
		t.Fatalf("loaded %d bundles", len(res.Catalog.Bundles))
	}
	if got := flight.total.Load(); got != total {
		t.Errorf("the loader counted %d bytes read, the files hold %d", got, total)
	}
	// a worker holds what it has not given back (less than releaseStep plus a page) and one blob or
	// document, and has looked at the start of the next one
	bound := int64(workers * (releaseStep + pageSize + 2*largest))
	peak := flight.peak.Load()
	if peak > bound || peak == 0 {
		t.Errorf("the loader held up to %d bytes of file data at once, want at most %d (largest blob %d bytes)", peak, bound, largest)
	}
	t.Logf("%d bytes of files, at most %d held at once (bound %d)", total, peak, bound)
	if c := flight.cur.Load(); c != 0 {
		t.Errorf("the load ended holding %d bytes of file data", c)
	}
}

// A mapped file truncated while it is parsed (its pages past the new end are gone) is reported as having
// changed while it was read, instead of crashing the process.
func TestMappedFileTruncatedWhileParsed(t *testing.T) {
	if !canMap {
		t.Skip("files are not mapped on this system")
	}
	dir := t.TempDir()
	bigCatalog(t, dir, 200, 6000)
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	const name = "yaml/catalog.yaml"
	data, mapped, err := readCapped(root.FS(), name, DefaultMaxFileSize, nil)
	if err != nil || !mapped {
		t.Fatalf("want the file mapped: mapped %v, %v", mapped, err)
	}
	defer unmapFile(data)
	if err := os.Truncate(filepath.Join(dir, name), 0); err != nil {
		t.Fatal(err)
	}
	sink := diag.NewLimiter(0)
	l := &fileLoader{file: name, cat: &Catalog{}, sink: sink, flight: &inFlight{}, data: data, mapped: true,
		lines: lineIndex{data: data}}
	l.parseMapped(data)
	ds := sink.Diagnostics()
	if len(ds) != 1 || ds[0].Rule != RuleFile || ds[0].File != name || !strings.Contains(ds[0].Message, "changed while it was read") {
		t.Fatalf("want one %s diagnostic saying %s changed while it was read, got %v", RuleFile, name, ds)
	}
	if len(l.cat.Bundles)+len(l.cat.Packages)+len(l.cat.Channels) != 0 {
		t.Errorf("what was decoded from the changing file was kept: %d bundles", len(l.cat.Bundles))
	}
}

// Line numbers counted from a base (set where the loader gave back the pages before it) are those counted
// from the file's start, in whatever order offsets are asked for.
func TestLineIndexRebase(t *testing.T) {
	text := []byte(strings.Repeat("ab\ncdef\n\nxyz", 50))
	counted := func(off int) (line, col int) {
		return 1 + bytes.Count(text[:off], []byte("\n")), off - bytes.LastIndexByte(text[:off], '\n')
	}
	rng := rand.New(rand.NewPCG(1, 2))
	x := lineIndex{data: text}
	rebased := 0
	for range 5000 {
		off := rng.IntN(len(text) + 1)
		if rng.IntN(8) == 0 {
			x.rebase(off)
			rebased++
			continue
		}
		line, col := x.at(off)
		if wl, wc := counted(off); line != wl || col != wc {
			t.Fatalf("offset %d after %d rebases: line %d column %d, want %d:%d", off, rebased, line, col, wl, wc)
		}
	}
}

// YAML documents are converted to JSON in the memory of the previous document's JSON: a load must be the
// same as with fresh memory for each document (a value pointing into the JSON would be overwritten).
func TestReusedJSONLoadMatchesFresh(t *testing.T) {
	synthetic := t.TempDir()
	bigCatalog(t, synthetic, 100, 2000)
	dirs := map[string]string{"synthetic": synthetic}
	if os.Getenv("CATALOGBOT_SHARED_DATA") != "" {
		for _, name := range []string{"community-operators-prod-v4.16", "community-operators-prod-v4.20"} {
			dirs[name] = sharedData(t, "catalogs", name)
		}
	}
	load := func(dir string, lean, reuse bool) *Result {
		t.Helper()
		old := reuseJSON
		reuseJSON = reuse
		defer func() { reuseJSON = old }()
		res, err := LoadDir(context.Background(), dir, LoadOptions{Lean: lean})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for name, dir := range dirs {
		t.Run(name, func(t *testing.T) {
			for _, lean := range []bool{false, true} {
				reused, fresh := load(dir, lean, true), load(dir, lean, false)
				if !reflect.DeepEqual(reused.Catalog, fresh.Catalog) {
					t.Errorf("lean=%v: the catalog differs when documents' JSON memory is reused", lean)
				}
				if got, want := diagStrings(reused.Diagnostics), diagStrings(fresh.Diagnostics); !reflect.DeepEqual(got, want) {
					t.Errorf("lean=%v: diagnostics differ:\nreused %q\nfresh  %q", lean, got, want)
				}
			}
		})
	}
}
