// Package shareddata finds the project's real test data (public catalogs, bundles, webhook payloads,
// GitHub's OpenAPI description): $CATALOGBOT_SHARED_DATA, else ../shared/data next to the repository.
package shareddata

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Root returns the shared data directory, or "" when it cannot be found.
func Root() string {
	if v := os.Getenv("CATALOGBOT_SHARED_DATA"); v != "" {
		return v
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return ""
	}
	// this file is <repo>/internal/shareddata/shareddata.go
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "data")
	if _, err := os.Stat(dir); err == nil {
		return filepath.Clean(dir)
	}
	return ""
}

// Dir returns a path inside the shared data. When the data is missing the test is skipped, or fails when
// CATALOGBOT_REQUIRE_DATA=1 (hack/test.sh sets it when it found the data, so no test skips part of it).
func Dir(t testing.TB, elem ...string) string {
	t.Helper()
	root := Root()
	p := filepath.Join(append([]string{root}, elem...)...)
	if root == "" {
		missing(t, "SHARED DATA NOT FOUND: set CATALOGBOT_SHARED_DATA to the shared/data directory")
	} else if _, err := os.Stat(p); err != nil {
		missing(t, "SHARED DATA NOT FOUND: "+err.Error())
	}
	return p
}

func missing(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("CATALOGBOT_REQUIRE_DATA") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}
