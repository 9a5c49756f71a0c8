package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/smoke"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/pipeline"
)

// The OLM flags of smoke and pr reach smoke.Options and the pipeline's SmokeInput.
func TestSmokeOLMFlags(t *testing.T) {
	o := parse(t, newSmokeCmd, "--catalog-image", "reg/cat@sha256:1", "--package", "a", "--olm", "v1", "--olmv1-manifests", "m", "--version", "a=1.2.3")
	check(t, "smoke olm", [3]any{o.smoke.OLM, o.smoke.OLMv1ManifestsDir, o.smoke.Versions}, [3]any{"v1", "m", map[string]string{"a": "1.2.3"}})
	p := parse(t, newPRCmd, "--base", "main", "--author", "alice", "--smoke-olm", "both", "--smoke-olmv1-manifests", "m1", "--smoke-node-image", "n")
	check(t, "pr olm", *p.smoke.input(), pipeline.SmokeInput{NodeImage: "n", OLM: "both", OLMv1ManifestsDir: "m1"})
	a := parse(t, newActionCmd, "--smoke-olm", "v1", "--smoke-olmv1-manifests", "m1")
	check(t, "action olm", *a.smoke.input(), pipeline.SmokeInput{OLM: "v1", OLMv1ManifestsDir: "m1"})
}

// smoke --olm both runs the install once per OLM, v0 then v1, a stage each, and writes both results.
func TestSmokeBothRunsEachOLM(t *testing.T) {
	var calls []string
	fake := func(_ context.Context, opts smoke.Options) (smoke.Result, error) {
		calls = append(calls, opts.OLM)
		res := smoke.Result{OLM: opts.OLM, Packages: []smoke.PackageResult{{Package: "a", Succeeded: opts.OLM == smoke.OLMv0}}}
		if opts.OLM == smoke.OLMv1 {
			res.Packages[0].OLM = smoke.OLMv1
			res.Packages[0].Diagnostics = []diag.Diagnostic{{Severity: diag.Error, Check: "smoke", Rule: "install-blocked", Package: "a", Message: "OLM v1 cannot install package a"}}
			return res, diag.InvalidError(smoke.ErrPackagesFailed)
		}
		return res, nil
	}
	var out, errOut bytes.Buffer
	so := &smokeOptions{io: streams{out: &out, err: &errOut}, out: outputFlags{format: "text"}, run: fake,
		smoke: smoke.Options{CatalogImage: "reg/cat@sha256:1", Packages: []string{"a"}, OLM: "both"}, jsonResult: filepath.Join(t.TempDir(), "r.json")}
	err := runSmoke(t.Context(), so)
	if err == nil || !slices.Equal(calls, []string{"v0", "v1"}) {
		t.Fatalf("err %v, calls %q", err, calls)
	}
	for _, want := range []string{"smoke (OLM v0)", "1 of 1 packages reached CSV Succeeded", "smoke (OLM v1)", "0 of 1 packages installed by OLM v1", "OLM v1 cannot install package a"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	data, err := os.ReadFile(so.jsonResult)
	if err != nil {
		t.Fatal(err)
	}
	var results []smoke.Result
	if err := json.Unmarshal(data, &results); err != nil || len(results) != 2 || results[1].OLM != "v1" {
		t.Errorf("json result %s: %v", data, err)
	}
}
