package bundle

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata goldens from the reference opm (needs CATALOGBOT_OPM)")

const (
	digestsFile = "testdata/opm-v1.73.0.sha256"
	refused     = "refused"
)

// goldenInputs are the bundles whose opm renders are recorded: the real ones and the edge cases.
func goldenInputs(t *testing.T) map[string]string {
	t.Helper()
	inputs := map[string]string{}
	for name, dir := range realBundles(t) {
		inputs[name] = dir
	}
	for _, c := range edgeCases {
		inputs["edge/"+c.name] = writeBundle(t, c.files)
	}
	return inputs
}

// TestRecordedOPMOutputs checks Render against what opm v1.73.0 printed for every real bundle and edge
// case in every mode, recorded as SHA-256 digests of its output (or "refused"), so that byte equality
// with opm is tested without opm. Two full outputs are kept as readable goldens. -update re-records
// everything from CATALOGBOT_OPM.
func TestRecordedOPMOutputs(t *testing.T) {
	inputs := goldenInputs(t)
	if *update {
		recordGoldens(t, inputs)
	}
	want := readDigests(t)
	for _, name := range slices.Sorted(maps.Keys(inputs)) {
		for _, m := range modes {
			key := name + "/" + m.name
			exp, ok := want[key]
			if !ok {
				t.Errorf("%s: no recorded opm output (run with -update and CATALOGBOT_OPM)", key)
				continue
			}
			out, err := renderMode(t, inputs[name], m)
			if strings.HasPrefix(name, "edge/strict-") {
				if exp != refused && err == nil {
					t.Errorf("%s: Render should refuse what opm renders", key)
				}
				continue
			}
			switch {
			case exp == refused && err == nil:
				t.Errorf("%s: opm refused this bundle, Render rendered it", key)
			case exp != refused && err != nil:
				t.Errorf("%s: Render failed: %v", key, err)
			case exp != refused && digest(out) != exp:
				t.Errorf("%s: output differs from opm's (sha256 %s, opm's %s)", key, digest(out), exp)
			}
		}
	}
	for _, g := range []string{"base.dir", "base.image-csvmeta"} {
		want, err := os.ReadFile(filepath.Join("testdata", g+".json"))
		if err != nil {
			t.Fatal(err)
		}
		name, modeName, _ := strings.Cut(g, ".")
		for _, m := range modes {
			if m.name != modeName {
				continue
			}
			got, err := renderMode(t, inputs["edge/"+name], m)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("testdata/%s.json: Render's output differs:\n%s", g, got)
			}
		}
	}
}

func recordGoldens(t *testing.T, inputs map[string]string) {
	opm := opmTool(t)
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, name := range slices.Sorted(maps.Keys(inputs)) {
		for _, m := range modes {
			out, ok := runOPM(t, opm, inputs[name], m)
			d := refused
			if ok {
				d = digest(out)
			}
			lines = append(lines, d+"  "+name+"/"+m.name)
			if ok && name == "edge/base" && (m.name == "dir" || m.name == "image-csvmeta") {
				if err := os.WriteFile(filepath.Join("testdata", "base."+m.name+".json"), out, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	header := "# SHA-256 of `opm render DIR -o json` (v1.73.0) per bundle and mode, or \"refused\"; written by go test -update\n"
	if err := os.WriteFile(digestsFile, []byte(header+strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readDigests(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(digestsFile)
	if err != nil {
		t.Fatalf("%v (run with -update and CATALOGBOT_OPM)", err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		d, key, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("%s: malformed line %q", digestsFile, line)
		}
		out[key] = d
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
