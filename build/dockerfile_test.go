package build

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata goldens (Dockerfiles from the real opm: needs CATALOGBOT_OPM)")

// dockerfileCases are `opm generate dockerfile` invocations and the equivalent specs.
var dockerfileCases = []struct {
	name string
	args []string
	spec DockerfileSpec
}{
	{"default-builder", []string{"-i", DefaultBase}, DockerfileSpec{Base: DefaultBase}},
	{"scratch", []string{"-i", "scratch"}, DockerfileSpec{Base: "scratch"}},
	{"builder-and-labels", []string{"-i", "registry.example/opm:v1", "-b", "registry.example/opm:builder", "-l", "z.key=last", "-l", "a.key=a value"},
		DockerfileSpec{Base: "registry.example/opm:v1", Builder: "registry.example/opm:builder", ExtraLabels: map[string]string{"z.key": "last", "a.key": "a value"}}},
}

// opmDockerfile runs the real `opm generate dockerfile ARGS configs` in a temp dir and returns its output.
func opmDockerfile(t *testing.T, opm string, args []string) []byte {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "configs"), 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), opm, append([]string{"generate", "dockerfile", "configs"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("opm generate dockerfile %v: %v\n%s", args, err, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "configs.Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDockerfileMatchesOpm(t *testing.T) {
	opm := tool(t, "CATALOGBOT_OPM")
	for _, tc := range dockerfileCases {
		t.Run(tc.name, func(t *testing.T) {
			want := opmDockerfile(t, opm, tc.args)
			tc.spec.ConfigsDir = filepath.Join(t.TempDir(), "configs")
			if got := DockerfileFor(tc.spec); !bytes.Equal(got, want) {
				t.Errorf("DockerfileFor differs from opm:\n--- got\n%s\n--- opm\n%s", got, want)
			}
			golden := filepath.Join("testdata", tc.name+".Dockerfile")
			if *update {
				if err := os.WriteFile(golden, want, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestDockerfileGolden runs without opm: the goldens were written by the real opm (go test -update).
func TestDockerfileGolden(t *testing.T) {
	for _, tc := range dockerfileCases {
		t.Run(tc.name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", tc.name+".Dockerfile"))
			if err != nil {
				t.Fatal(err)
			}
			tc.spec.ConfigsDir = "some/path/configs/"
			if got := DockerfileFor(tc.spec); !bytes.Equal(got, want) {
				t.Errorf("DockerfileFor differs from the opm golden:\n--- got\n%s\n--- golden\n%s", got, want)
			}
		})
	}
	if got, want := Dockerfile(DefaultBase, "configs"), DockerfileFor(DockerfileSpec{Base: DefaultBase, ConfigsDir: "configs"}); !bytes.Equal(got, want) {
		t.Errorf("Dockerfile differs from DockerfileFor with the default builder")
	}
}
