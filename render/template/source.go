package template

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/filetree"
	"github.com/catalogbot/catalogbot/render"
	"github.com/catalogbot/catalogbot/render/bundle"
)

// Store keeps rendered bundle images by manifest digest and reference as written (a rendered bundle
// names its image, so the same digest under another reference is another render). Bundles seeded from
// committed catalogs that name an image by tag have no digest: they are used offline only.
//
// A Store is safe for concurrent use.
type Store struct {
	mu      sync.Mutex
	entries map[string]*entry
	// dir, when set, keeps what was pulled across runs (one JSON file per render).
	dir string
}

// entry is everything known about one image reference's render.
type entry struct {
	// Plain is the bundle in opm's default form (olm.bundle.object), nil when unknown.
	Plain *catalog.Bundle `json:"plain,omitempty"`
	// Migrated is the olm.csv.metadata form, kept only when the default form is unknown.
	Migrated *catalog.Bundle `json:"migrated,omitempty"`
	// Description and Icon are its ClusterServiceVersion's (HeadKnown says they are known).
	Description string        `json:"description,omitempty"`
	Icon        *catalog.Icon `json:"icon,omitempty"`
	HeadKnown   bool          `json:"headKnown,omitempty"`
}

// NewStore returns an empty store; dir, when not empty, persists pulled renders.
func NewStore(dir string) *Store {
	return &Store{entries: map[string]*entry{}, dir: dir}
}

// storeKey is the key of image as written, pinned at digest ("" when unknown).
func storeKey(image, digest string) string { return digest + " " + image }

// digestOf returns the digest a reference is pinned by, "" for a tag.
func digestOf(image string) string {
	if i := strings.LastIndex(image, "@"); i >= 0 {
		return image[i+1:]
	}
	return ""
}

// Seed adds every bundle of c (a catalog committed on the trusted base branch, never a pull request's
// files). semver says c's packages were rendered from semver templates: then a package's description and
// icon are its default channel head's, which a bundle in the olm.csv.metadata form cannot tell otherwise.
func (s *Store) Seed(c *catalog.Catalog, semver bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	byName := map[string]*entry{}
	for _, b := range c.Bundles {
		if b.Image == "" {
			continue
		}
		key := storeKey(b.Image, digestOf(b.Image))
		e := s.entries[key]
		if e == nil {
			e = &entry{}
			s.entries[key] = e
		}
		byName[b.Package+"/"+b.Name] = e
		clean := *b
		clean.Parsed, clean.Pos = nil, catalog.Pos{}
		csv, err := bundle.CSVOf(&clean)
		if err != nil {
			return fmt.Errorf("seeding bundle %q: %w", b.Name, err)
		}
		switch {
		case csv != nil:
			e.Plain, e.Migrated = &clean, nil
			e.Description, e.Icon = headMetadata(csv)
			e.HeadKnown = true
		case e.Plain == nil:
			e.Migrated = &clean
		}
	}
	if !semver {
		return nil
	}
	for _, p := range c.Packages {
		for _, ch := range c.Channels {
			if ch.Package != p.Name || ch.Name != p.DefaultChannel || len(ch.Entries) == 0 {
				continue
			}
			if e := byName[p.Name+"/"+ch.Entries[len(ch.Entries)-1].Name]; e != nil && !e.HeadKnown {
				e.Description, e.HeadKnown = p.Description, true
				if p.Icon != nil {
					icon := *p.Icon
					e.Icon = &icon
				}
			}
		}
	}
	return nil
}

// Len is the number of references the store knows.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}

// get returns the entry of key, from memory or disk.
func (s *Store) get(key string) *entry {
	s.mu.Lock()
	e := s.entries[key]
	s.mu.Unlock()
	if e != nil || s.dir == "" {
		return e
	}
	data, err := os.ReadFile(s.path(key))
	if err != nil {
		return nil
	}
	var d entry
	if json.Unmarshal(data, &d) != nil || d.Plain == nil {
		return nil
	}
	s.mu.Lock()
	s.entries[key] = &d
	s.mu.Unlock()
	return &d
}

func (s *Store) put(key string, e *entry) {
	s.mu.Lock()
	s.entries[key] = e
	s.mu.Unlock()
	if s.dir == "" {
		return
	}
	data, err := json.Marshal(e)
	if err != nil {
		return
	}
	// The disk copy only saves time: failing to write it fails nothing.
	_ = filetree.WriteFileBytes(s.path(key), 0o644, data)
}

func (s *Store) path(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(s.dir, hex.EncodeToString(sum[:])+".json")
}

// bundleOf is e's bundle in the requested form, nil when e cannot give it.
func (e *entry) bundleOf(csvMetadata bool) (*Bundle, error) {
	out := &Bundle{Description: e.Description, Icon: e.Icon, HeadKnown: e.HeadKnown}
	switch {
	case e.Plain != nil && csvMetadata:
		b, err := bundle.ToCSVMetadata(e.Plain)
		if err != nil {
			return nil, err
		}
		out.Bundle = b
	case e.Plain != nil:
		out.Bundle = e.Plain
	case csvMetadata && e.Migrated != nil:
		out.Bundle = e.Migrated
	default:
		return nil, nil
	}
	cp := *out.Bundle
	cp.Properties = append([]catalog.Property(nil), cp.Properties...)
	out.Bundle = &cp
	return out, nil
}

// ErrNotCached is an image that an offline source does not have.
var ErrNotCached = errors.New("not in the bundle cache")

// ErrOffline marks an ErrNotCached of a render asked to pull nothing (--offline): pulling would find it.
var ErrOffline = errors.New("offline")

// Images is a Source: bundles from a Store, else pulled from their registry (a tag resolved to its
// digest first) and kept in the Store. Offline, only the Store is used.
type Images struct {
	Store   *Store
	Offline bool
	// Pull renders images the store does not have; nil means offline.
	Pull *render.BundleImages
	// SeededTags is the drift gate's rule: a tag the store was seeded with (from the trusted committed
	// catalogs: the base branch, locally HEAD) is rendered as committed, not resolved again, so only the
	// references the change adds reach a registry. Without it (render writing the catalogs), a tag is
	// resolved online before the seed is used: a tag moved since it was committed renders what it names now.
	SeededTags bool
}

// Bundle implements Source.
func (im *Images) Bundle(ctx context.Context, image string, csvMetadata bool) (*Bundle, error) {
	digest := digestOf(image)
	online := !im.Offline && im.Pull != nil
	if digest == "" && online && im.SeededTags {
		if e := im.Store.get(storeKey(image, "")); e != nil {
			if b, err := e.bundleOf(csvMetadata); b != nil || err != nil {
				return b, err
			}
		}
	}
	if digest == "" && online {
		d, err := im.Pull.Resolve(ctx, image)
		if err != nil {
			return nil, err
		}
		digest = d
	}
	if e := im.Store.get(storeKey(image, digest)); e != nil {
		if b, err := e.bundleOf(csvMetadata); b != nil || err != nil {
			return b, err
		}
	}
	if !online {
		if im.Offline {
			return nil, diag.InvalidError(fmt.Errorf("%w (%w): no committed catalog the cache was seeded from (the base branch; locally HEAD or --seed-from) holds it in the form this catalog needs", ErrNotCached, ErrOffline))
		}
		return nil, diag.InvalidError(fmt.Errorf("%w, and this render pulls nothing: no committed catalog the cache was seeded from (the base branch; locally HEAD or --seed-from) holds it in the form this catalog needs", ErrNotCached))
	}
	plain, got, err := im.Pull.Render(ctx, image)
	if err != nil {
		return nil, err
	}
	if got != digest {
		return nil, fmt.Errorf("image %s resolved to %s, then served %s", image, digest, got)
	}
	e := &entry{Plain: plain, HeadKnown: true}
	if csv, err := bundle.CSVOf(plain); err == nil && csv != nil {
		e.Description, e.Icon = headMetadata(csv)
	}
	im.Store.put(storeKey(image, digest), e)
	return e.bundleOf(csvMetadata)
}
