package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/bot"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/pipeline"
)

// The verbs that run the pipeline, smoke or the App.
func TestFullVerbFlags(t *testing.T) {
	t.Run("pr", func(t *testing.T) {
		o := parse(t, newPRCmd, "--base", "main", "--head", "feature", "--author", "alice", "--approved-by", "bob,carol",
			"--approved-by", "dave", "--skip-images", "--summary", "s.md", "--smoke-node-images", "v1.33.13=kindest/node:a",
			"--smoke-kubeconfig", "kc", "--registry-timeout", "5s", "--stage-timeout", "1m", "--repo", "r", "--max-total-bytes", "1GiB")
		check(t, "range", [3]string{o.in.Base, o.in.Head, o.in.Author}, [3]string{"main", "feature", "alice"})
		check(t, "approvers", o.approvers, []string{"bob", "carol", "dave"})
		check(t, "skip images", o.skipImages, true)
		check(t, "summary", o.summary, "s.md")
		check(t, "node images", o.smoke.in.NodeImages, map[string]string{"v1.33.13": "kindest/node:a"})
		check(t, "kubeconfig", o.smoke.input().KubeconfigPath, "kc")
		check(t, "timeouts", [2]time.Duration{o.registryTimeout, o.in.StageTimeout}, [2]time.Duration{5 * time.Second, time.Minute})
		check(t, "repository", o.repoDir, "r")
		check(t, "total size", o.limits.override().MaxTotalBytes, int64(1<<30))
		kc := filepath.Join(t.TempDir(), "kind.yaml")
		if err := os.WriteFile(kc, []byte("kind: Cluster\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		o = parse(t, newPRCmd, "--base", "main", "--author", "alice", "--smoke-node-image", "n", "--smoke-kind-config", kc)
		in, err := o.smoke.load()
		check(t, "kind config", [2]any{in.KindConfig, err}, [2]any{"kind: Cluster\n", nil})
		o = parse(t, newPRCmd, "--base", "main", "--author", "alice", "--smoke-node-image", "n", "--smoke-kind-config", kc+".missing")
		_, err = o.smoke.load()
		check(t, "missing kind config", diag.CategoryOf(err), diag.Usage)
		o = parse(t, newPRCmd, "--base", "main", "--author", "alice")
		check(t, "default head", o.in.Head, "HEAD")
		check(t, "no smoke cluster", o.smoke.input() == nil, true)
		check(t, "default timeouts", [2]time.Duration{o.registryTimeout, o.in.StageTimeout}, [2]time.Duration{2 * time.Minute, 30 * time.Minute})
	})
	t.Run("smoke", func(t *testing.T) {
		o := parse(t, newSmokeCmd, "--catalog-image", "reg/cat@sha256:1", "--package", "a", "--package", "b", "--channel", "a=stable",
			"--upgrade-from", "a=a.v1.0.0", "--timeout", "5m", "--parallel", "3", "--create-cluster", "--json-result", "r.json")
		check(t, "image", o.smoke.CatalogImage, "reg/cat@sha256:1")
		check(t, "packages", o.smoke.Packages, []string{"a", "b"})
		check(t, "channels", o.smoke.Channel, map[string]string{"a": "stable"})
		check(t, "upgrades", o.smoke.Upgrade, map[string]string{"a": "a.v1.0.0"})
		check(t, "timeout and parallel", [2]any{o.smoke.Timeout, o.smoke.Parallel}, [2]any{5 * time.Minute, 3})
		check(t, "create", o.smoke.CreateCluster, true)
		check(t, "json result", o.jsonResult, "r.json")
	})
	t.Run("build and publish", func(t *testing.T) {
		o := parse(t, newBuildCmd, "--platform", "linux/amd64,linux/arm64", "--base", "127.0.0.1:5000/opm:v1", "--output", "tarball:c.tar", "--tag", "cat:1", "dir")
		check(t, "build", [4]string{o.dir, o.output, o.tag, o.image.base}, [4]string{"dir", "tarball:c.tar", "cat:1", "127.0.0.1:5000/opm:v1"})
		opts, err := o.image.options()
		if err != nil {
			t.Fatal(err)
		}
		check(t, "platforms", len(opts.Platforms), 2)
		check(t, "a loopback base is plain HTTP", len(opts.NameOptions), 1)
		p := parse(t, newPublishCmd, "-o", "json", "dir", "quay.io/example/index:v4.16")
		check(t, "publish", [3]string{p.dir, p.target, p.out.format}, [3]string{"dir", "quay.io/example/index:v4.16", "json"})
	})
	t.Run("serve", func(t *testing.T) {
		o := parse(t, newServeCmd, "--config", "b.yaml", "--log-level", "debug", "--check")
		check(t, "serve", [3]any{o.configPath, o.logLevel, o.check}, [3]any{"b.yaml", "debug", true})
		// The App releases merged bundles with build/bundleimage's pusher (bot.WithBundlePusher).
		check(t, "serve's bundle image pusher", o.bundlePusher, bot.BundlePusher(bundlePusher{}))
	})
	t.Run("demo and action", func(t *testing.T) {
		d := parse(t, newDemoCmd, "--dir", "d", "--keep", "-o", "json")
		check(t, "demo", [3]any{d.demo.Dir, d.demo.Keep, d.demo.Format}, [3]any{"d", true, "json"})
		a := parse(t, newActionCmd, "--repo", "r", "--merge", "--skip-images")
		check(t, "action", [3]any{a.action.RepoDir, a.action.Merge, a.action.SkipImages}, [3]any{"r", true, true})
		check(t, "action without smoke", a.smoke.input() == nil, true)
		a = parse(t, newActionCmd, "--smoke-olm-manifests", "olm", "--smoke-node-images", "v1.33.13=kindest/node:a", "--smoke-node-images", "v1.37.0=kindest/node:b")
		check(t, "action smoke", *a.smoke.input(), pipeline.SmokeInput{OLMManifestsDir: "olm",
			NodeImages: map[string]string{"v1.33.13": "kindest/node:a", "v1.37.0": "kindest/node:b"}})
	})
}

func TestRejectedPRCommandLineRunsNothing(t *testing.T) {
	ran := false
	cmd := newPRCmd(func(context.Context, *prOptions) error { ran = true; return nil })
	cmd.SetArgs([]string{"--head", "x"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	if err := cmd.ExecuteContext(t.Context()); err == nil || ran {
		t.Errorf("pr without --base: err %v, ran %v", err, ran)
	}
}
