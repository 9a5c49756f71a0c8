package pipeline_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/internal/shareddata"
	"github.com/catalogbot/catalogbot/report"
)

const rmqPkg = "rabbitmq-messaging-topology-operator"

// withPackage adds a package of the shared fbc-templates (its operators/ directory and committed
// catalogs) to t.
func withPackage(tt *testing.T, t tree, pkg string) tree {
	tt.Helper()
	root := shareddata.Dir(tt, "fbc-templates")
	files := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if !strings.HasPrefix(rel, "operators/"+pkg+"/") && !strings.Contains(rel, "/"+pkg+"/") {
			return nil
		}
		data, err := os.ReadFile(p)
		files[rel] = string(data)
		return err
	})
	if err != nil {
		tt.Fatal(err)
	}
	return t.with(files)
}

// The gate judges what a change adds (golangci-lint's new-from-rev): rabbitmq-messaging-topology-
// operator's released v1.12.1 replaces v1.12.0, which catalogs v4.17 to v4.22 do not hold (real data,
// merged upstream). A change that touches the package passes, its summary counting the six as the base's;
// the attack, a change that adds one more dangling replaces next to them, is refused for that one only.
func TestPolicyStageJudgesWhatTheChangeAdds(t *testing.T) {
	var requests atomic.Int64
	base := withPackage(t, multiBase(t), rmqPkg).with(map[string]string{".catalogbot.yaml": policyConfig})
	ci := "operators/" + rmqPkg + "/ci.yaml"
	touch := map[string]string{ci: base.files[ci] + "# reviewed\n"}
	st := stageOf(t, runMulti(t, base, base.with(touch), remote.WithTransport(refusingTransport{&requests})), "policy")
	pre := baselineCount(st.Summary)
	if st.Status == report.Fail || slices.ContainsFunc(st.Diagnostics, func(d diag.Diagnostic) bool { return d.Severity != diag.Note }) || pre < 6 {
		t.Fatalf("pre-existing findings: %s %s %v", st.Status, st.Summary, st.Diagnostics)
	}

	v422 := "catalogs/v4.22/" + rmqPkg + "/catalog.yaml"
	data := base.files[v422]
	bad := strings.Replace(data, "replaces: rabbitmq-messaging-topology-operator.v1.12.0", "replaces: rabbitmq-messaging-topology-operator.v1.11.9", 1)
	if bad == data {
		t.Fatalf("%s: no replaces of v1.12.0", v422)
	}
	head := base.with(map[string]string{ci: touch[ci], v422: bad})
	st = stageOf(t, runMulti(t, base, head, remote.WithTransport(refusingTransport{&requests})), "policy")
	files := filesOf(st, "policy-replaces-missing")
	if st.Status != report.Fail || len(files) != 1 || files[0] != v422 || baselineCount(st.Summary) != pre-1 {
		t.Fatalf("a new dangling replaces: %s %s %v", st.Status, st.Summary, st.Diagnostics)
	}
}

// baselineCount is the number of findings a policy stage's summary counts as the base's (0 when none).
func baselineCount(summary string) int {
	m := regexp.MustCompile(`(\d+) findings? already on the base branch`).FindStringSubmatch(summary)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// The bundle directory rules run on the bundle directories a change adds: kube-green's real 0.7.0 bundle
// committed as operators/kube-green/0.7.1 is refused on its CSV's spec.version line; as 0.7.0 it passes
// (kube-green's ci.yaml enables fbc, so no policy-using-fbc warning either).
func TestPolicyStageBundleDirectory(t *testing.T) {
	var requests atomic.Int64
	base := multiBase(t).with(map[string]string{".catalogbot.yaml": policyConfig})
	src := shareddata.Dir(t, "bundles", "kube-green")
	bundle := func(dir string) map[string]string {
		files := map[string]string{}
		ci, err := os.ReadFile(filepath.Join(src, "ci.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		files["operators/kube-green/ci.yaml"] = string(ci)
		for _, sub := range []string{"manifests", "metadata"} {
			entries, err := os.ReadDir(filepath.Join(src, "0.7.0", sub))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				data, err := os.ReadFile(filepath.Join(src, "0.7.0", sub, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				files["operators/kube-green/"+dir+"/"+sub+"/"+e.Name()] = string(data)
			}
		}
		return files
	}
	st := stageOf(t, runMulti(t, base, base.with(bundle("0.7.0")), remote.WithTransport(refusingTransport{&requests})), "policy")
	if len(filesOf(st, "policy-operator-version-directory")) != 0 || len(filesOf(st, "policy-using-fbc")) != 0 {
		t.Fatalf("kube-green 0.7.0: %s %s %v", st.Status, st.Summary, st.Diagnostics)
	}
	st = stageOf(t, runMulti(t, base, base.with(bundle("0.7.1")), remote.WithTransport(refusingTransport{&requests})), "policy")
	if files := filesOf(st, "policy-operator-version-directory"); st.Status != report.Fail || len(files) != 1 ||
		files[0] != "operators/kube-green/0.7.1/manifests/kube-green.clusterserviceversion.yaml" {
		t.Fatalf("kube-green 0.7.0 as 0.7.1: %s %s %v", st.Status, st.Summary, st.Diagnostics)
	}
}

// The attack on the baseline: a change that repeats a finding the base already has, in a channel of its
// own (v4.22's dangling replaces of v1.12.0 copied into a new channel), hoping it passes as the base's.
// The channel is part of what a finding is, so the copy is the change's.
func TestAttackBaselineRepeatsABaseFinding(t *testing.T) {
	var requests atomic.Int64
	base := withPackage(t, multiBase(t), rmqPkg).with(map[string]string{".catalogbot.yaml": policyConfig})
	v422 := "catalogs/v4.22/" + rmqPkg + "/catalog.yaml"
	copied := base.files[v422] + "---\nschema: olm.channel\npackage: " + rmqPkg + "\nname: candidate\nentries:\n" +
		"- name: rabbitmq-messaging-topology-operator.v1.12.1\n  replaces: rabbitmq-messaging-topology-operator.v1.12.0\n"
	st := stageOf(t, runMulti(t, base, base.with(map[string]string{v422: copied}), remote.WithTransport(refusingTransport{&requests})), "policy")
	var found []diag.Diagnostic
	for _, d := range st.Diagnostics {
		if d.Rule == "policy-replaces-missing" {
			found = append(found, d)
		}
	}
	if st.Status != report.Fail || len(found) != 1 || found[0].Channel != "candidate" || found[0].File != v422 {
		t.Fatalf("a base finding copied into a new channel: %s %s %v", st.Status, st.Summary, st.Diagnostics)
	}
}
