package pipeline_test

import (
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/pipeline"
)

// The Pod Security Standard of the smoke's namespaces comes from the base branch's configuration: a
// pull request cannot loosen it to baseline (nor, through an invalid value, switch it off) for its own
// install.
func TestSmokePodSecurityFromTheBaseOnly(t *testing.T) {
	for _, tc := range []struct {
		base, head string
		want       string
	}{
		{"  podSecurity: baseline\n", "  podSecurity: restricted\n", "baseline"},
		{"", "  podSecurity: baseline\n", ""}, // "": smoke.Options' default, restricted
		{"  podSecurity: restricted\n", "  podSecurity: privileged\n", "restricted"},
	} {
		base, head := smokeTrees(t, false, tc.base)
		head.files[".catalogbot.yaml"] = strings.Replace(head.files[".catalogbot.yaml"], "smoke:\n  enabled: true\n"+tc.base, "smoke:\n  enabled: true\n"+tc.head, 1)
		if !strings.Contains(head.files[".catalogbot.yaml"], tc.head) {
			t.Fatalf("head config unchanged:\n%s", head.files[".catalogbot.yaml"])
		}
		f := newFakeSmoke(t)
		runSmoke(t, base, head, f, pipeline.SmokeInput{NodeImages: nodeImages}, nil, 0)
		if len(f.calls) == 0 {
			t.Fatalf("base %q head %q: no install", tc.base, tc.head)
		}
		for _, o := range f.calls {
			if o.PodSecurity != tc.want {
				t.Errorf("base %q head %q: install %s with pod security %q, want %q", tc.base, tc.head, o.ClusterName, o.PodSecurity, tc.want)
			}
		}
	}
}
