package pipeline_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/internal/shareddata"
	"github.com/catalogbot/catalogbot/report"
)

const policyConfig = multiConfig + `policy:
  presets: [community]
`

const (
	odfV416 = "catalogs/v4.16/odf-node-recovery-operator/catalog.yaml"
	odfV417 = "catalogs/v4.17/odf-node-recovery-operator/catalog.yaml"
)

// The policy stage runs only when the base configuration asks for it, on the touched packages of every
// catalog holding them: odf-node-recovery-operator's real catalogs pass the community preset, and
// v4.17 (migrated to olm.csv.metadata from migrateFrom on) refuses the v4.16 file's olm.bundle.object.
func TestPolicyStageOnTemplateRepository(t *testing.T) {
	var requests atomic.Int64
	base := multiBase(t)
	touch := map[string]string{"operators/odf-node-recovery-operator/ci.yaml": base.files["operators/odf-node-recovery-operator/ci.yaml"] + "# reviewed\n"}
	r := runMulti(t, base, base.with(touch), remote.WithTransport(refusingTransport{&requests}))
	if slices.ContainsFunc(r.Stages, func(s report.Stage) bool { return s.Name == "policy" }) {
		t.Fatal("a repository without policy: got a policy stage")
	}

	base = base.with(map[string]string{".catalogbot.yaml": policyConfig})
	st := stageOf(t, runMulti(t, base, base.with(touch), remote.WithTransport(refusingTransport{&requests})), "policy")
	if st.Status != report.Pass || !strings.Contains(st.Summary, "7 catalogs") {
		t.Fatalf("real catalogs: %s %s %v", st.Status, st.Summary, st.Diagnostics)
	}

	st = stageOf(t, runMulti(t, base, base.with(map[string]string{odfV417: base.files[odfV416]}), remote.WithTransport(refusingTransport{&requests})), "policy")
	if st.Status != report.Fail || !slices.Equal(slices.Compact(filesOf(st, "policy-csv-metadata-required")), []string{odfV417}) {
		t.Fatalf("olm.bundle.object in v4.17: %s %s %v", st.Status, st.Summary, st.Diagnostics)
	}
}

// The attack: the pull request that breaks a rule also switches the policy off in .catalogbot.yaml. The
// base branch's configuration decides; the head's does not loosen it.
func TestPolicyStageIgnoresTheChangesOwnConfig(t *testing.T) {
	var requests atomic.Int64
	base := multiBase(t).with(map[string]string{".catalogbot.yaml": policyConfig})
	head := base.with(map[string]string{odfV417: base.files[odfV416],
		".catalogbot.yaml": multiConfig + "policy:\n  presets: [none]\n  rules: {policy-csv-metadata-required: off}\n"})
	st := stageOf(t, runMulti(t, base, head, remote.WithTransport(refusingTransport{&requests})), "policy")
	if st.Status != report.Fail || len(filesOf(st, "policy-csv-metadata-required")) == 0 {
		t.Fatalf("the head's configuration switched the rule off: %s %s %v", st.Status, st.Summary, st.Diagnostics)
	}
}

// A single-catalog repository: the touched package is checked in the head catalog, with positions
// relative to the repository. The change gives a real bundle a skipRange reaching above its own version.
func TestPolicyStageOnSingleCatalog(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(shareddata.Dir(t, "catalogs", "composed-279"), "hawtio-operator", "catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	const file = "catalog/hawtio-operator/catalog.json"
	base := tree{files: map[string]string{".catalogbot.yaml": "apiVersion: catalogbot.dev/v1alpha1\nkind: Config\nmaintainers: [catalog-admin]\npolicy: {presets: [community]}\n",
		file: string(data)}}
	const from, to = `"skipRange": ">=1.0.0 <1.1.0"`, `"skipRange": ">=1.0.0 <1.2.0"`
	if !strings.Contains(base.files[file], from) {
		t.Fatalf("%s has no %s", file, from)
	}
	var requests atomic.Int64
	st := stageOf(t, runMulti(t, base, base.with(map[string]string{file: base.files[file] + "\n"}), remote.WithTransport(refusingTransport{&requests})), "policy")
	if st.Status != report.Pass || !strings.Contains(st.Summary, "hawtio-operator") {
		t.Fatalf("real package: %s %s %v", st.Status, st.Summary, st.Diagnostics)
	}
	st = stageOf(t, runMulti(t, base, base.with(map[string]string{file: strings.Replace(base.files[file], from, to, 1)}), remote.WithTransport(refusingTransport{&requests})), "policy")
	if st.Status != report.Fail || len(st.Diagnostics) == 0 || st.Diagnostics[0].File != file || st.Diagnostics[0].Rule != "policy-skiprange-above-version" || st.Diagnostics[0].Line == 0 {
		t.Fatalf("skipRange above the bundle: %s %s %v", st.Status, st.Summary, st.Diagnostics)
	}
}

// The change rules see the whole change: touching two operators, or a new bundle directory and a
// template together, fails the policy stage.
func TestPolicyStageChangeRules(t *testing.T) {
	var requests atomic.Int64
	base := multiBase(t).with(map[string]string{".catalogbot.yaml": policyConfig})
	const odfCI, nfsCI = "operators/odf-node-recovery-operator/ci.yaml", "operators/nfs-provisioner-operator/ci.yaml"
	head := base.with(map[string]string{odfCI: base.files[odfCI] + "# a\n", nfsCI: base.files[nfsCI] + "# b\n"})
	st := stageOf(t, runMulti(t, base, head, remote.WithTransport(refusingTransport{&requests})), "policy")
	if st.Status != report.Fail || len(filesOf(st, "policy-one-operator-per-change")) != 1 {
		t.Fatalf("two operators: %s %s %v", st.Status, st.Summary, st.Diagnostics)
	}
	head = base.with(map[string]string{nfsTemplate: base.files[nfsTemplate] + "# reviewed\n",
		"operators/nfs-provisioner-operator/0.0.10/metadata/annotations.yaml": "annotations: {}\n"})
	st = stageOf(t, runMulti(t, base, head, remote.WithTransport(refusingTransport{&requests})), "policy")
	if st.Status != report.Fail || !slices.Equal(filesOf(st, "policy-bundle-and-catalog-change"), []string{"operators/nfs-provisioner-operator/0.0.10/metadata/annotations.yaml"}) {
		t.Fatalf("bundle and template: %s %s %v", st.Status, st.Summary, st.Diagnostics)
	}
	bad := strings.Replace(base.files[nfsCI], "addReviewers: true", "addReviewers: true\nupdateGraph: semver", 1)
	st = stageOf(t, runMulti(t, base, base.with(map[string]string{nfsCI: bad}), remote.WithTransport(refusingTransport{&requests})), "policy")
	if st.Status != report.Fail || !slices.Equal(filesOf(st, "policy-ci-schema"), []string{nfsCI}) {
		t.Fatalf("ci.yaml against the schema: %s %s %v", st.Status, st.Summary, st.Diagnostics)
	}
	const rc = "operators/nfs-provisioner-operator/0.0.10/release-config.yaml"
	st = stageOf(t, runMulti(t, base, base.with(map[string]string{rc: "catalog_templates:\n- template_name: semver.yaml\n  channels: [alpha]\n"}),
		remote.WithTransport(refusingTransport{&requests})), "policy")
	if st.Status != report.Fail || !slices.Equal(filesOf(st, "policy-release-config"), []string{rc}) {
		t.Fatalf("release-config.yaml naming an unmapped template: %s %s %v", st.Status, st.Summary, st.Diagnostics)
	}
	twice := strings.Replace(base.files[nfsCI], "      type: olm.template.basic\n",
		"      type: olm.template.basic\n    - catalog_names: [v4.21]\n      template_name: semver.yaml\n      type: olm.semver\n", 1)
	if twice == base.files[nfsCI] {
		t.Fatalf("%s has no olm.template.basic mapping", nfsCI)
	}
	st = stageOf(t, runMulti(t, base, base.with(map[string]string{nfsCI: twice}), remote.WithTransport(refusingTransport{&requests})), "policy")
	if st.Status != report.Fail || !slices.Equal(filesOf(st, "policy-one-template-per-catalog"), []string{nfsCI}) {
		t.Fatalf("v4.21 from two templates: %s %s %v", st.Status, st.Summary, st.Diagnostics)
	}
}

// The olmv1 preset says, in the stage summary, how many of the touched bundles OLM v1 can install, and
// why not for the others (warnings: the change still passes).
func TestPolicyStageOLMv1Summary(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(shareddata.Dir(t, "catalogs", "composed-279"), "hawtio-operator", "catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	const file = "catalog/hawtio-operator/catalog.json"
	// the change adds the package: what the base already had would be the base's (baseline)
	base := tree{files: map[string]string{".catalogbot.yaml": "apiVersion: catalogbot.dev/v1alpha1\nkind: Config\nmaintainers: [catalog-admin]\npolicy: {presets: [olmv1]}\n"}}
	var requests atomic.Int64
	st := stageOf(t, runMulti(t, base, base.with(map[string]string{file: string(data)}), remote.WithTransport(refusingTransport{&requests})), "policy")
	if diag.HasErrors(st.Diagnostics) || len(filesOf(st, "olmv1-all-namespaces")) != 10 || !strings.Contains(st.Summary, "OLM v1 can install 0 of the 10 bundles") {
		t.Fatalf("olmv1 preset: %s %s %v", st.Status, st.Summary, st.Diagnostics)
	}
}

// The attack: a package's blobs put in another package's directory. The policy stage checks them as the
// package they name (blob identity), not as the directory's: odf-node-recovery-operator's v4.16 file
// (olm.bundle.object) copied under nfs-provisioner-operator's directory of the migrated v4.17 is refused.
func TestPolicyStageChecksBlobsInAnotherPackagesDirectory(t *testing.T) {
	var requests atomic.Int64
	base := multiBase(t).with(map[string]string{".catalogbot.yaml": policyConfig})
	planted := "catalogs/v4.17/nfs-provisioner-operator/odf.yaml"
	st := stageOf(t, runMulti(t, base, base.with(map[string]string{planted: base.files[odfV416]}), remote.WithTransport(refusingTransport{&requests})), "policy")
	if st.Status != report.Fail || !slices.Contains(filesOf(st, "policy-csv-metadata-required"), planted) {
		t.Fatalf("odf's blobs in nfs's directory: %s %s %v", st.Status, st.Summary, st.Diagnostics)
	}
}
