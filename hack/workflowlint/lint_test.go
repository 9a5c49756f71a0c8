package workflowlint

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
)

// repoRoot is catalogbot's repository, two levels up.
const repoRoot = "../.."

// catalogbotUses is how the examples name catalogbot: by a release commit's full SHA.
var catalogbotUses = regexp.MustCompile(`(?m)uses: catalogbot/catalogbot@([0-9a-f]{40}) # `)

// project lays out, in a temporary repository, action.yml and the given workflows with their
// `uses: catalogbot/catalogbot@SHA` turned into `uses: ./`, so actionlint reads action.yml as a local
// action: it then checks the workflows' `with:` against its inputs and their expressions against its
// outputs, as well as action.yml itself.
func project(t *testing.T, workflows map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	action, err := os.ReadFile(filepath.Join(repoRoot, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{".git", filepath.Join(".github", "workflows")} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "action.yml"), action, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, data := range workflows {
		if !catalogbotUses.MatchString(data) {
			t.Errorf("%s does not use catalogbot pinned by a commit SHA", name)
		}
		local := catalogbotUses.ReplaceAllString(data, "uses: ./ # ")
		if err := os.WriteFile(filepath.Join(dir, ".github", "workflows", name), []byte(local), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func lint(t *testing.T, dir string) []*actionlint.Error {
	t.Helper()
	var out bytes.Buffer
	l, err := actionlint.NewLinter(&out, &actionlint.LinterOptions{WorkingDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	errs, err := l.LintRepository(dir)
	if err != nil {
		t.Fatal(err)
	}
	return errs
}

func examples(t *testing.T) map[string]string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(repoRoot, "examples", "workflows", "*.yml"))
	if err != nil || len(paths) < 3 {
		t.Fatalf("example workflows: %v %v", paths, err)
	}
	out := map[string]string{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = string(data)
	}
	return out
}

// The example workflows and action.yml are clean under actionlint, with every `with:` an input of
// action.yml and every output read one it declares; every action they use is pinned by a full SHA.
func TestExampleWorkflowsAndActionAreActionlintClean(t *testing.T) {
	ex := examples(t)
	for _, e := range lint(t, project(t, ex)) {
		t.Errorf("%s:%d:%d: %s [%s]", filepath.Base(e.Filepath), e.Line, e.Column, e.Message, e.Kind)
	}
	action, _ := os.ReadFile(filepath.Join(repoRoot, "action.yml"))
	ex["action.yml"] = string(action)
	uses := regexp.MustCompile(`uses:\s*(\S+)`)
	pinned := regexp.MustCompile(`^[\w.-]+/[\w./-]+@[0-9a-f]{40}$`)
	for name, data := range ex {
		for _, m := range uses.FindAllStringSubmatch(data, -1) {
			if !pinned.MatchString(m[1]) {
				t.Errorf("%s uses %s, not pinned by a full commit SHA", name, m[1])
			}
		}
	}
}

// The check can fail: an input action.yml lacks, an output it does not declare and a workflow error are
// each reported.
func TestActionlintCatchesWhatTheExamplesMustNotHold(t *testing.T) {
	ex := examples(t)
	bad := ex["pr-checks.yml"]
	bad = strings.Replace(bad, "        id: catalogbot\n", "        id: catalogbot\n        with:\n          no-such-input: x\n", 1)
	bad = strings.Replace(bad, "outputs.head-sha", "outputs.no-such-output", 1)
	bad = strings.Replace(bad, "runs-on: ubuntu-latest", "runs-on: ubuntu-latest\n    timeout-minutes: soon", 1)
	errs := lint(t, project(t, map[string]string{"pr-checks.yml": bad}))
	var all []string
	for _, e := range errs {
		all = append(all, e.Message)
	}
	joined := strings.Join(all, "\n")
	for _, want := range []string{"no-such-input", "no-such-output", "float number"} {
		if !strings.Contains(joined, want) {
			t.Errorf("actionlint did not report %s:\n%s", want, joined)
		}
	}
}
