package policy

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	apierrors "github.com/operator-framework/api/pkg/validation/errors"

	"github.com/catalogbot/catalogbot/filetree"
)

// ofCacheFormat names what an entry holds: change it whenever ofBundle or runOF would give other findings
// for the same objects, so that no entry of the old code is read.
const ofCacheFormat = "catalogbot-policy-of-2"

// ofCategoriesEnv is the variable the categories validator reads a file of custom categories from: while
// it is set, findings depend on a file the key does not cover, so nothing is read from or written to disk.
const ofCategoriesEnv = "OPERATOR_BUNDLE_CATEGORIES"

// OFCache keeps what operator-framework's validators found on a bundle, by the SHA-256 of everything they
// read: the bundle's objects as the catalog stores them (their objectsDigest), the catalog's
// Kubernetes version, the validators that run, and the versions of the validators' modules (ofModules).
// In memory it serves every catalog and both sides (head and base) of one process, an identical bundle
// being validated once, concurrent askers waiting for the first; in dir (when not empty) it serves later
// runs. A changed object, version or rule is another key: a miss, never another
// bundle's pass. An entry that does not read back whole, under its own key and format, is a miss.
type OFCache struct {
	dir string
	mu  sync.Mutex
	mem map[[32]byte]*ofEntry
	// crds is the CRD validator's result per CRD manifest (see crdCache), for every bundle this cache serves.
	crds *crdCache
	// hits counts the bundles answered from disk, runs those validated.
	hits, runs atomic.Int64
}

type ofEntry struct {
	once sync.Once
	out  []ofFinding
	err  error
}

// NewOFCache returns an empty cache keeping entries in dir, or in memory only when dir is "".
func NewOFCache(dir string) *OFCache {
	return &OFCache{dir: dir, mem: map[[32]byte]*ofEntry{}, crds: &crdCache{m: map[[32]byte]apierrors.ManifestResult{}}}
}

// OFCacheDir is the directory the front-ends keep operator-framework's validators' findings in: policy-of
// in the render cache ($XDG_CACHE_HOME/catalogbot/render), or "" without a user cache directory.
func OFCacheDir() string {
	base, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(base, "catalogbot", "render", "policy-of")
}

// counts returns how many bundles the cache answered from disk and how many it validated.
func (c *OFCache) counts() (fromDisk, validated int) {
	return int(c.hits.Load()), int(c.runs.Load())
}

// findings returns what compute finds for the bundle of key: from memory, from disk, or computed (once per
// key and cache) and kept. An error (a bundle the validators cannot read) is kept in memory only.
func (c *OFCache) findings(key [32]byte, compute func() ([]ofFinding, error)) ([]ofFinding, error) {
	c.mu.Lock()
	e, ok := c.mem[key]
	if !ok {
		e = &ofEntry{}
		c.mem[key] = e
	}
	c.mu.Unlock()
	e.once.Do(func() {
		if out, ok := c.read(key); ok {
			c.hits.Add(1)
			e.out = out
			return
		}
		c.runs.Add(1)
		if e.out, e.err = compute(); e.err == nil {
			c.write(key, e.out)
		}
	})
	return e.out, e.err
}

// ofCacheEntry is an entry on disk.
type ofCacheEntry struct {
	Format   string      `json:"format"`
	Key      string      `json:"key"`
	Findings []ofFinding `json:"findings"`
}

// disk is the directory entries are read from and written to, "" for none.
func (c *OFCache) disk() string {
	if c.dir == "" || os.Getenv(ofCategoriesEnv) != "" {
		return ""
	}
	return c.dir
}

func (c *OFCache) path(dir string, key [32]byte) string {
	k := hex.EncodeToString(key[:])
	return filepath.Join(dir, k[:2], k+".json")
}

func (c *OFCache) read(key [32]byte) ([]ofFinding, bool) {
	dir := c.disk()
	if dir == "" {
		return nil, false
	}
	data, err := os.ReadFile(c.path(dir, key))
	if err != nil {
		return nil, false
	}
	var e ofCacheEntry
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if d.Decode(&e) != nil || d.More() || e.Format != ofCacheFormat || e.Key != hex.EncodeToString(key[:]) {
		return nil, false
	}
	return e.Findings, true
}

// write keeps an entry: written to a temporary file renamed into place, so a reader sees a whole entry or
// none. It is not synced: an entry a crash truncates does not decode, which is a miss. A cache that cannot
// be written is a miss next time, never an error of the check.
func (c *OFCache) write(key [32]byte, out []ofFinding) {
	dir := c.disk()
	if dir == "" {
		return
	}
	data, err := json.Marshal(ofCacheEntry{Format: ofCacheFormat, Key: hex.EncodeToString(key[:]), Findings: out})
	if err != nil {
		return
	}
	_ = filetree.WriteCacheFile(c.path(dir, key), 0o755, data)
}

// ofValidatorModules are the modules whose code decides the validators' findings, at the versions go.mod
// requires (TestOFCacheKeyNamesTheValidatorsModules holds them to it, so a dependency update changes the
// key). A binary's build information adds every module it links.
var ofValidatorModules = []string{
	"github.com/google/cel-go v0.29.2",
	"github.com/operator-framework/api v0.45.0",
	"go.podman.io/image/v5 v5.40.0",
	"k8s.io/apiextensions-apiserver v0.36.2",
	"k8s.io/apimachinery v0.36.2",
	"k8s.io/apiserver v0.36.2",
	"k8s.io/kube-openapi v0.0.0-20260317180543-43fb72c5454a",
}

// ofModules is what the key says of the validators' code: ofValidatorModules, then every module the binary
// links with its version and checksum (and replacement) when its build information lists them (a test
// binary's does not), one a line.
var ofModules = sync.OnceValue(func() string {
	var b strings.Builder
	for _, m := range ofValidatorModules {
		b.WriteString(m + "\n")
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b.String()
	}
	var lines []string
	for _, m := range bi.Deps {
		l := m.Path + " " + m.Version + " " + m.Sum
		if r := m.Replace; r != nil {
			l += " => " + r.Path + " " + r.Version + " " + r.Sum
		}
		lines = append(lines, l)
	}
	sort.Strings(lines)
	b.WriteString(bi.GoVersion + "\n")
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	return b.String()
})

// ofKey is the digest of everything operator-framework's validators read on a bundle (OFCache): objects
// is its manifests' objectsDigest.
func ofKey(objects [32]byte, kube string, on func(rule string) bool) [32]byte {
	h := sha256.New()
	field(h, []byte(ofCacheFormat))
	field(h, []byte(ofModules()))
	field(h, []byte(kube))
	var rules []string
	for _, v := range ofValidators {
		if on(v.rule) {
			rules = append(rules, v.rule)
		}
	}
	field(h, []byte(strings.Join(rules, "\n")))
	field(h, objects[:])
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// objectsDigest is the SHA-256 of a bundle's manifests as the catalog stores them (olm.bundle.object
// data), each with its length, in order.
func objectsDigest(objects [][]byte) [32]byte {
	h := sha256.New()
	for _, o := range objects {
		field(h, o)
	}
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// field writes b to h after its length, so that no two lists of fields hash alike.
func field(h hash.Hash, b []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(b)))
	h.Write(n[:])
	h.Write(b)
}
