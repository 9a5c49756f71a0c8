package render

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/internal/shareddata"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

const newDigest = "@sha256:2222222222222222222222222222222222222222222222222222222222222222"

// bumpCase bumps ref in testdata/bump/<file> (or a shared-data file) to image.
type bumpCase struct {
	name, file, ref, image string
}

func bumpCases(t *testing.T) []bumpCase {
	docs := filepath.Join(shareddata.Dir(t, "refconfigs", "olm-docs"), "composite-catalog-example.catalog.yaml")
	znc := filepath.Join(shareddata.Dir(t, "refconfigs", "zncdatadev-kubedoop-catalog"), "catalog-template.yaml@4867554")
	return []bumpCase{
		{"comments-plain", "comments.yaml", "commons-operator", "quay.io/zncdatadev/commons-operator-catalog" + newDigest},
		{"comments-extra-spaces", "comments.yaml", "listener-operator", "quay.io/zncdatadev/listener-operator-catalog:0.2.0"},
		{"comments-digest", "comments.yaml", "hive-operator", "quay.io/zncdatadev/hive-operator-catalog" + newDigest},
		{"double-quoted", "quoted.yaml", "alpha", "quay.io/example/alpha-catalog" + newDigest},
		{"single-quoted", "quoted.yaml", "beta", "quay.io/example/beta-catalog:v2"},
		{"flow", "flow.yaml", "bêta-operator", "quay.io/example/beta-catalog" + newDigest},
		{"crlf", "crlf.yaml", "beta", "quay.io/example/beta-catalog:v2"},
		{"olm-docs", docs, "prometheus-operator", "quay.io/prometheus-operator/catalog" + newDigest},
		{"zncdatadev", znc, "listener-operator", "quay.io/zncdatadev/listener-operator-catalog:0.1.0"},
	}
}

func readCase(t *testing.T, file string) []byte {
	t.Helper()
	if !filepath.IsAbs(file) {
		file = filepath.Join("testdata", "bump", file)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// changedLines counts the lines a diff from a to b removes plus those it adds.
func changedLines(a, b []byte) int {
	n := 0
	for _, op := range diffLines(splitLines(a), splitLines(b)) {
		if op.kind != opEqual {
			n++
		}
	}
	return n
}

// TestBumpGolden checks each bump against testdata/bump/<case>.golden (go test -update rewrites them):
// exactly one line changes, one removed and one added, and comments and layout stay.
func TestBumpGolden(t *testing.T) {
	for _, c := range bumpCases(t) {
		t.Run(c.name, func(t *testing.T) {
			in := readCase(t, c.file)
			out, err := Bump(in, c.ref, c.image)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "bump", c.name+".golden")
			if *update {
				if err := os.WriteFile(golden, out, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out, want) {
				d, _ := unifiedDiff("golden", "got", want, out, 50)
				t.Errorf("differs from %s:\n%s", golden, d)
			}
			if n := changedLines(in, out); n != 2 {
				t.Errorf("%d lines changed, want 1 removed and 1 added", n)
			}
			cfg, ds := ParseConfig(out, c.file)
			if cfg == nil {
				t.Fatalf("the result does not parse: %v", ds)
			}
			for _, r := range cfg.References {
				if r.Name == c.ref && r.Image != c.image {
					t.Errorf("image is %q, want %q", r.Image, c.image)
				}
			}
		})
	}
}

func TestBumpRefuses(t *testing.T) {
	cfg := []byte("name: c\nreferences:\n- name: a\n  image: quay.io/x/a:v1\n- name: b\n  image: &img quay.io/x/b:v1\n" +
		"- name: c\n  image: *img\n- name: d\n  image: >-\n    quay.io/x/d:v1\n- name: e\n  image: quay.io/x/e:v1\n- name: e\n  image: quay.io/x/e:v2\n" +
		"- name: f\n  image: quay.io/x/\n    f:v1\n- name: g\n  image:\n")
	cases := []struct {
		ref, image, want string
		cat              diag.Category
	}{
		{"missing", "quay.io/x/a:v2", `no reference named "missing"`, diag.Usage},
		{"a", "Not An Image", `image "Not An Image"`, diag.Usage},
		{"b", "quay.io/x/b:v2", "has an anchor or a tag", diag.Internal},
		{"c", "quay.io/x/c:v2", "is an alias", diag.Usage},
		{"d", "quay.io/x/d:v2", "block scalar", diag.Internal},
		{"e", "quay.io/x/e:v3", "appears twice", diag.Usage},
		{"f", "quay.io/x/f:v2", "spans several lines", diag.Internal},
		{"g", "quay.io/x/g:v2", "is empty", diag.Usage},
	}
	for _, c := range cases {
		out, err := Bump(cfg, c.ref, c.image)
		if err == nil || !strings.Contains(err.Error(), c.want) || diag.CategoryOf(err) != c.cat {
			t.Errorf("bump %s: got %q, %v (%s), want an error with %q (%s)", c.ref, out, err, diag.CategoryOf(err), c.want, c.cat)
		}
	}
	// A value that cannot be written plain gets double quotes.
	out, err := Bump([]byte("name: c\nreferences:\n- name: a\n  image: x\n"), "a", "./dir #1")
	if err != nil || string(out) != "name: c\nreferences:\n- name: a\n  image: \"./dir #1\"\n" {
		t.Errorf("got %q %v", out, err)
	}
}

// yqTool returns the yq v4.54.2 binary the comparison runs: CATALOGBOT_YQ, else the project's tool cache
// (<cache>/catalogbot/tools/yq-v4.54.2/yq), else the test skips. hack/test.sh does not build yq, so
// CATALOGBOT_REQUIRE_TOOLS does not make its absence fatal.
func yqTool(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CATALOGBOT_YQ"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("CATALOGBOT_YQ=%s: %v", p, err)
		}
		return p
	}
	cache := os.Getenv("CATALOGBOT_CACHE")
	if cache == "" {
		if dir, err := os.UserCacheDir(); err == nil {
			cache = filepath.Join(dir, "catalogbot")
		}
	}
	p := filepath.Join(cache, "tools", "yq-v4.54.2", "yq")
	if _, err := os.Stat(p); err != nil {
		t.Skip("SKIPPED: YQ NOT FOUND (set CATALOGBOT_YQ to a build of github.com/mikefarah/yq/v4@v4.54.2)")
	}
	return p
}

// TestBumpVersusYQ makes the same edit with yq v4 (the form DEPENDENCIES.md says works) and compares the
// number of changed lines: Bump changes one line everywhere, and never more than yq.
func TestBumpVersusYQ(t *testing.T) {
	yq := yqTool(t)
	var report strings.Builder
	fmt.Fprintf(&report, "%-22s %5s %5s\n", "case", "bump", "yq")
	for _, c := range bumpCases(t) {
		in := readCase(t, c.file)
		ours, err := Bump(in, c.ref, c.image)
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(t.TempDir(), "catalog.yaml")
		if err := os.WriteFile(f, in, 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		expr := fmt.Sprintf(`(.references[] | select(.name == %q)).image = %q`, c.ref, c.image)
		msg, err := exec.CommandContext(ctx, yq, "-i", expr, f).CombinedOutput()
		cancel()
		yqCount := "fails"
		if err == nil {
			theirs, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			n := changedLines(in, theirs)
			yqCount = fmt.Sprint(n)
			if n < changedLines(in, ours) {
				t.Errorf("%s: yq changes fewer lines (%d) than Bump", c.name, n)
			}
			if n > 2 {
				d, _ := unifiedDiff("before", "yq", in, theirs, 30)
				t.Logf("%s: yq's edit:\n%s", c.name, d)
			}
		} else {
			t.Logf("%s: yq failed: %v: %s", c.name, err, msg)
		}
		fmt.Fprintf(&report, "%-22s %5d %5s\n", c.name, changedLines(in, ours), yqCount)
	}
	t.Logf("changed lines (removed + added):\n%s", report.String())
}
