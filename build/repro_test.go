package build

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// blobList names every blob of an image or index by role and digest, children in index order: two builds
// are the same image exactly when their lists are equal.
func blobList(t *testing.T, res Result) []string {
	t.Helper()
	if res.Index == nil {
		return imageBlobs(t, "", res.Image)
	}
	return indexBlobs(t, "", res.Index)
}

func indexBlobs(t *testing.T, at string, idx v1.ImageIndex) []string {
	t.Helper()
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	out := []string{at + "index " + mustDigest(t, idx).String()}
	for i, d := range im.Manifests {
		child := fmt.Sprintf("%s[%d %s] ", at, i, platformString(d.Platform))
		if d.MediaType.IsIndex() {
			sub, err := idx.ImageIndex(d.Digest)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, indexBlobs(t, child, sub)...)
			continue
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, imageBlobs(t, child, img)...)
	}
	return out
}

func imageBlobs(t *testing.T, at string, img v1.Image) []string {
	t.Helper()
	cfg, err := img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	out := []string{at + "manifest " + mustDigest(t, img).String(), at + "config " + cfg.String()}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range layers {
		diff, err := l.DiffID()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%slayer %d %s (diff %s)", at, i, mustDigest(t, l), diff))
	}
	return out
}

// buildSide is one side of a reproducibility comparison: its blobs and the bytes of what it wrote.
type buildSide struct {
	blobs []string
	files map[string][]byte
}

// sameBuild fails when two sides differ, naming the first differing blob or file.
func sameBuild(t *testing.T, what string, a, b buildSide) {
	t.Helper()
	if len(a.blobs) == 0 {
		t.Fatalf("%s: no blobs", what)
	}
	if !slices.Equal(a.blobs, b.blobs) {
		for i := range max(len(a.blobs), len(b.blobs)) {
			if i >= len(a.blobs) || i >= len(b.blobs) || a.blobs[i] != b.blobs[i] {
				t.Errorf("%s: blobs differ at %d:\n%s\n%s", what, i, at(a.blobs, i), at(b.blobs, i))
				return
			}
		}
	}
	for name, ab := range a.files {
		bb, ok := b.files[name]
		if !ok || len(ab) == 0 || !bytes.Equal(ab, bb) {
			t.Errorf("%s: %s differs (%d and %d bytes, first difference at %d)", what, name, len(ab), len(bb), firstDiff(ab, bb))
		}
	}
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "(none)"
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// binaryBytes looks like a program: compressible runs between incompressible ones, large enough for many
// deflate blocks.
func binaryBytes(seed int64, size int) []byte {
	r := rand.New(rand.NewSource(seed))
	b := make([]byte, size)
	for i := 0; i < size; i += 4096 {
		chunk := b[i:min(i+4096, size)]
		if (i/4096)%3 == 0 {
			r.Read(chunk)
		} else {
			copy(chunk, bytes.Repeat([]byte(fmt.Sprintf("text %d\x00", i/4096)), len(chunk)))
		}
	}
	return b
}

// placeBinary writes data at file with the given mode, owner and times: what differs between two release
// runs of the same commit (another directory, another time, another umask, another user).
func placeBinary(t *testing.T, file string, data []byte, mode os.FileMode, uid int, mtime time.Time) {
	t.Helper()
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(file, mode); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(file, uid, uid); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(file, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

// withUmask runs f with the process umask set to mask (tests using it do not run in parallel).
func withUmask(mask int, f func()) {
	old := syscall.Umask(mask)
	defer syscall.Umask(old)
	f()
}

// requireReproducible runs build twice one after the other (other file modes, owner, times and umask),
// then n times at once (file modes stepping down by modeStep), and requires every build to give the
// first one's bytes; it returns the first.
func requireReproducible(t *testing.T, n int, mode, otherMode, modeStep os.FileMode,
	build func(t *testing.T, mode os.FileMode, uid int, mtime time.Time) buildSide) buildSide {
	t.Helper()
	var first, second buildSide
	withUmask(0o022, func() { first = build(t, mode, 0, time.Unix(1700000000, 0)) })
	withUmask(0o077, func() { second = build(t, otherMode, 4321, time.Now().Add(time.Hour)) })
	sameBuild(t, "second build (other files, modes, owner, times, umask)", first, second)
	sides := make([]buildSide, n)
	t.Run("at once", func(t *testing.T) {
		for i := range sides {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				sides[i] = build(t, mode-os.FileMode(i)*modeStep, 1000+i, time.Now().Add(time.Duration(i)*time.Second))
			})
		}
	})
	for i, s := range sides {
		sameBuild(t, fmt.Sprintf("build %d of %d at once", i+1, n), first, s)
	}
	return first
}

// The release image is byte-identical from the same binary bytes, whatever their files' names, modes,
// owners and times, the umask and the time of the build, and when two builds run at once: the index,
// every manifest, config and layer, and the OCI layout archive (hack/release.sh's checksummed file).
func TestProgramImageIsByteReproducible(t *testing.T) {
	ctx := t.Context()
	amd, arm := binaryBytes(1, 3<<20+17), binaryBytes(2, 2<<20+5)
	build := func(t *testing.T, mode os.FileMode, uid int, mtime time.Time) buildSide {
		t.Helper()
		dir := t.TempDir()
		bins := map[string]string{"linux/amd64": filepath.Join(dir, "catalogbot_amd64"), "linux/arm64": filepath.Join(dir, "catalogbot_arm64")}
		placeBinary(t, bins["linux/amd64"], amd, mode, uid, mtime)
		placeBinary(t, bins["linux/arm64"], arm, mode, uid, mtime.Add(time.Minute))
		res, err := ProgramImage(ctx, Program{Binaries: bins, Path: "/usr/local/bin/catalogbot", Args: []string{"serve"}},
			Options{Base: Scratch, Epoch: time.Unix(1764133314, 0), Labels: map[string]string{RevisionLabel: "0123456789abcdef0123456789abcdef01234567",
				"org.opencontainers.image.version": "v1.2.3"}})
		if err != nil {
			t.Fatal(err)
		}
		archive := filepath.Join(dir, "image.tar")
		if err := WriteLayoutArchive(ctx, res, archive, "ghcr.io/catalogbot/catalogbot:v1.2.3"); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(archive)
		if err != nil {
			t.Fatal(err)
		}
		return buildSide{blobs: blobList(t, res), files: map[string][]byte{"layout archive": b}}
	}
	first := requireReproducible(t, 4, 0o755, 0o500, 0o011, build)

	// The comparison sees one byte: a binary that differs in one byte is another image.
	amd[len(amd)/2] ^= 1
	if other := build(t, 0o755, 0, time.Unix(1700000000, 0)); slices.Equal(first.blobs, other.blobs) ||
		bytes.Equal(first.files["layout archive"], other.files["layout archive"]) {
		t.Error("a binary changed in one byte gave the same image")
	}
}

// A catalog image and what catalogbot build writes (OCI layout, its archive, a docker tarball) are
// byte-identical from the same catalog in directories of other names, with files of other modes, owners and
// times, under another umask, and when builds run at once.
func TestCatalogImageIsByteReproducible(t *testing.T) {
	ctx := t.Context()
	tag, _ := name.NewTag("example.com/catalog:v1")
	build := func(t *testing.T, mode os.FileMode, uid int, mtime time.Time) buildSide {
		t.Helper()
		dir, _ := fbcDir(t)
		err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			m := mode
			if info.IsDir() {
				m |= 0o700
			}
			if err := os.Chmod(p, m); err != nil {
				return err
			}
			if os.Geteuid() == 0 {
				if err := os.Chown(p, uid, uid); err != nil {
					return err
				}
			}
			return os.Chtimes(p, mtime, mtime)
		})
		if err != nil {
			t.Fatal(err)
		}
		side := buildSide{files: map[string][]byte{}}
		for _, platforms := range [][]v1.Platform{nil, {linuxARM64}} {
			opts := Options{Base: Scratch, Epoch: testEpoch, Platforms: platforms, Labels: map[string]string{RevisionLabel: "0123456789abcdef0123456789abcdef01234567"}}
			if platforms == nil {
				opts.Platforms = []v1.Platform{linuxAMD64, linuxARM64}
			}
			res, err := Image(ctx, dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			side.blobs = append(side.blobs, blobList(t, res)...)
			out := t.TempDir()
			if err := WriteLayout(ctx, res, filepath.Join(out, "layout"), tag.String()); err != nil {
				t.Fatal(err)
			}
			if err := TarDir(filepath.Join(out, "layout"), filepath.Join(out, "layout.tar")); err != nil {
				t.Fatal(err)
			}
			kinds := []string{"layout.tar"}
			if len(platforms) == 1 {
				if err := WriteTarball(ctx, res, tag, filepath.Join(out, "docker.tar")); err != nil {
					t.Fatal(err)
				}
				kinds = append(kinds, "docker.tar")
			}
			for _, k := range kinds {
				b, err := os.ReadFile(filepath.Join(out, k))
				if err != nil {
					t.Fatal(err)
				}
				side.files[fmt.Sprintf("%s of %d platforms", k, len(opts.Platforms))] = b
			}
		}
		return side
	}
	requireReproducible(t, 3, 0o644, 0o400, 0o040, build)
}

// The layout archive holds exactly the layout's files under their names, normalized.
func TestLayoutArchiveEntries(t *testing.T) {
	dir := t.TempDir()
	res, err := ProgramImage(t.Context(), Program{Binaries: map[string]string{"linux/amd64": writeFileT(t, dir, "b", "x")}, Path: "/b"},
		Options{Base: Scratch, Epoch: testEpoch})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "a.tar")
	if err := WriteLayoutArchive(t.Context(), res, file, "r"); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" || !h.ModTime.Equal(time.Unix(0, 0)) ||
			(h.Typeflag == tar.TypeDir) != (h.Mode == 0o755) || h.Format != tar.FormatUSTAR {
			t.Errorf("entry %s not normalized: %+v", h.Name, h)
		}
		names = append(names, h.Name)
	}
	if !slices.IsSorted(names) || !slices.Contains(names, "index.json") || !slices.Contains(names, "oci-layout") {
		t.Errorf("entries %q: want index.json, oci-layout and blobs, sorted", names)
	}
}

func writeFileT(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}
