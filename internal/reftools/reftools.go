// Package reftools finds the reference tools differential tests run against (opm, the distribution
// registry), built by hack/test.sh and named by environment variables.
package reftools

import (
	"os"
	"path/filepath"
	"testing"
)

// Path returns the tool named by env. Without it the test is skipped, or fails under
// CATALOGBOT_REQUIRE_TOOLS=1 (CI never skips differential tests silently).
func Path(t testing.TB, env string) string {
	t.Helper()
	p := os.Getenv(env)
	if p == "" {
		if os.Getenv("CATALOGBOT_REQUIRE_TOOLS") == "1" {
			t.Fatalf("%s is not set and CATALOGBOT_REQUIRE_TOOLS=1", env)
		}
		t.Skipf("SKIPPED: %s IS NOT SET (run hack/test.sh to build the reference tools)", env)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s=%s: %v", env, p, err)
	}
	return p
}

// OPM is the reference opm v1.73.0 ($CATALOGBOT_OPM).
func OPM(t testing.TB) string {
	t.Helper()
	return Path(t, "CATALOGBOT_OPM")
}

// OPMv1_46_0 is the reference opm v1.46.0 ($CATALOGBOT_OPM_V1_46_0), the release community-operators-prod
// pins: repositories that keep its rendering are held to it.
func OPMv1_46_0(t testing.TB) string {
	t.Helper()
	return Path(t, "CATALOGBOT_OPM_V1_46_0")
}

// OPMEnv is the environment of an opm that pulls images, with home as its private home (HOME,
// XDG_RUNTIME_DIR, TMPDIR), where it writes the containers signature policy that accepts the unsigned
// test images.
func OPMEnv(t testing.TB, home string) []string {
	t.Helper()
	policy := filepath.Join(home, ".config", "containers", "policy.json")
	if err := os.MkdirAll(filepath.Dir(policy), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(policy, []byte(`{"default":[{"type":"insecureAcceptAnything"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return append(os.Environ(), "HOME="+home, "XDG_RUNTIME_DIR="+home, "TMPDIR="+home)
}
