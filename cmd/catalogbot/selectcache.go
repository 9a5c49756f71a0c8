package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"

	"github.com/catalogbot/catalogbot/checks/validate"
)

// selectCache is the select cache of catalog directory dir in the repository whose git directory is
// gitDir: .git/catalogbot/select-HASH (one per catalog directory), authenticated with a key in the user's
// cache directory. Without a key (no user cache directory, or an unreadable key) there is no cache: the
// run reads every file, as it would the first time.
func selectCache(gitDir, dir string) *validate.SelectCache {
	base, err := os.UserCacheDir()
	if err != nil {
		return nil
	}
	key, err := validate.CacheKey(filepath.Join(base, "catalogbot", "select-cache.key"))
	if err != nil {
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	sum := sha256.Sum256([]byte(abs))
	return &validate.SelectCache{File: filepath.Join(gitDir, "catalogbot", "select-"+hex.EncodeToString(sum[:8])), Key: key}
}
