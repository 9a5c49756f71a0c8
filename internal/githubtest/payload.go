package githubtest

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// Payload returns one of GitHub's real webhook payload examples (file under the shared data's
// webhooks/examples, e.g. "pull_request/opened.payload.json") with edits applied: each key is a dotted
// path ("pull_request.head.sha"), its value replaces or adds that field (missing objects are created).
// Without the shared data the test is skipped, or failed under CATALOGBOT_REQUIRE_DATA.
func Payload(t testing.TB, file string, edits map[string]any) []byte {
	t.Helper()
	data, err := os.ReadFile(shareddata.Dir(t, "webhooks", "examples", filepath.FromSlash(file)))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("webhook payload %s: %v", file, err)
	}
	for _, k := range slices.Sorted(maps.Keys(edits)) {
		parts := strings.Split(k, ".")
		m := doc
		for _, p := range parts[:len(parts)-1] {
			next, ok := m[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[p] = next
			}
			m = next
		}
		m[parts[len(parts)-1]] = edits[k]
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// PayloadFile writes Payload's result to a file in the test's temp dir (a runner's GITHUB_EVENT_PATH) and
// returns its path.
func PayloadFile(t testing.TB, file string, edits map[string]any) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(path, Payload(t, file, edits), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
