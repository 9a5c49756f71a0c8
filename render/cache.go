package render

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/filetree"
)

// cacheVersion changes whenever a rendering changes for the same image, so old entries are not reused.
const cacheVersion = "catalogbot-render-1"

// diskCache keeps rendered references by image digest. Entries are written to a temporary file and
// renamed into place, so a reader sees a whole entry or none; an unreadable entry is a miss.
type diskCache struct {
	dir string
}

// cacheHeader is the first line of an entry; the catalog follows as catalog.WriteJSON writes it.
type cacheHeader struct {
	Version string `json:"version"`
	Kind    Kind   `json:"kind"`
	Digest  string `json:"digest"`
}

// cacheKey hashes everything a rendering depends on.
func cacheKey(fields ...string) string {
	h := sha256.New()
	h.Write([]byte(cacheVersion))
	for _, f := range fields {
		h.Write([]byte{0})
		h.Write([]byte(f))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (c *diskCache) path(key string) string {
	return filepath.Join(c.dir, key[:2], key+".json")
}

// get returns the entry for key, or false.
func (c *diskCache) get(ctx context.Context, key string) (*cacheHeader, *catalog.Catalog, bool) {
	if c == nil {
		return nil, nil, false
	}
	data, err := os.ReadFile(c.path(key))
	if err != nil {
		return nil, nil, false
	}
	line, rest, ok := bytes.Cut(data, []byte("\n"))
	var h cacheHeader
	if !ok || json.Unmarshal(line, &h) != nil || h.Version != cacheVersion {
		return nil, nil, false
	}
	res, err := catalog.LoadFS(ctx, fstest.MapFS{"catalog.json": {Data: rest}}, catalog.LoadOptions{})
	if err != nil || len(res.Diagnostics) > 0 {
		return nil, nil, false
	}
	return &h, res.Catalog, true
}

// put stores an entry.
func (c *diskCache) put(key string, h cacheHeader, cat *catalog.Catalog) error {
	if c == nil {
		return nil
	}
	final := c.path(key)
	h.Version = cacheVersion
	err := filetree.WriteFile(final, 0o644, func(w io.Writer) error {
		if err := json.NewEncoder(w).Encode(h); err != nil {
			return err
		}
		return catalog.WriteJSON(w, cat)
	})
	if err != nil {
		return fmt.Errorf("render cache entry: %w", err)
	}
	return nil
}
