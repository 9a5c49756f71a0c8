package yamljson

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/internal/shareddata"
	"sigs.k8s.io/yaml"
)

// TestRealDocuments converts every YAML document of the shared real data (catalogs, templates and their
// catalogs, bundle manifests, reference configs, opm's cases) and compares each with sigs.k8s.io/yaml.
// The real catalogs are opm's output, the subset this package is for: nearly all of their documents
// must be converted, or validate silently falls back to the slow path.
func TestRealDocuments(t *testing.T) {
	root := shareddata.Dir(t)
	type count struct{ docs, converted int }
	counts := map[string]*count{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			return err
		}
		data, err := readFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		group := strings.Join(strings.SplitN(filepath.ToSlash(rel), "/", 3)[:2], "/")
		c := counts[group]
		if c == nil {
			c = &count{}
			counts[group] = c
		}
		for _, doc := range splitDocuments(data) {
			c.docs++
			if same(t, doc) {
				c.converted++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(counts) == 0 {
		t.Fatal("no YAML documents in the shared data")
	}
	for group, c := range counts {
		t.Logf("%s: %d of %d documents converted", group, c.converted, c.docs)
		if strings.HasPrefix(group, "catalogs/") && c.converted*100 < c.docs*99 {
			t.Errorf("%s: only %d of %d documents converted; the rest take sigs.k8s.io/yaml's slow path", group, c.converted, c.docs)
		}
	}
}

// splitDocuments splits a YAML stream before each line starting with "---", each document keeping its
// separator line, as the catalog loader hands them over.
func splitDocuments(data []byte) [][]byte {
	var docs [][]byte
	start := 0
	for i := 0; i < len(data); {
		next := len(data)
		if k := bytes.IndexByte(data[i:], '\n'); k >= 0 {
			next = i + k + 1
		}
		if i > start && bytes.HasPrefix(data[i:], []byte("---")) {
			docs = append(docs, data[start:i])
			start = i
		}
		i = next
	}
	return append(docs, data[start:])
}

func readFile(path string) ([]byte, error) { return os.ReadFile(path) }

// BenchmarkRealCatalog converts every document of community-operators-prod-v4.20 with this package (into
// one buffer reused from document to document, as catalog's loader does) and, side by side, with
// sigs.k8s.io/yaml.
func BenchmarkRealCatalog(b *testing.B) {
	files, err := filepath.Glob(filepath.Join(shareddata.Dir(b, "catalogs", "community-operators-prod-v4.20"), "*", "*.yaml"))
	if err != nil || len(files) == 0 {
		b.Fatalf("no catalog files: %v", err)
	}
	var docs [][]byte
	size := 0
	for _, f := range files {
		data, err := readFile(f)
		if err != nil {
			b.Fatal(err)
		}
		size += len(data)
		docs = append(docs, splitDocuments(data)...)
	}
	var js []byte // reused from document to document, as catalog's loader does
	for _, c := range []struct {
		name    string
		convert func([]byte) bool
	}{
		{"yamljson", func(d []byte) (ok bool) { js, _, ok = AppendConvert(js[:0], d, Options{}); return ok }},
		{"sigs.k8s.io-yaml", func(d []byte) bool { _, err := yaml.YAMLToJSON(d); return err == nil }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				for _, d := range docs {
					if !c.convert(d) {
						b.Fatalf("%s did not convert %.200q", c.name, d)
					}
				}
			}
		})
	}
}
