package main

import (
	"context"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// parse runs one verb's command line with a run function that only records the options it got.
func parse[O any](t *testing.T, newCmd func(runner[O]) *cobra.Command, args ...string) *O {
	t.Helper()
	var got *O
	cmd := newCmd(func(_ context.Context, o *O) error {
		got = o
		return nil
	})
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	if err := cmd.ExecuteContext(t.Context()); err != nil {
		t.Fatalf("%s: %v", strings.Join(args, " "), err)
	}
	if got == nil {
		t.Fatalf("%s: the run function was not called", strings.Join(args, " "))
	}
	return got
}

func check(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %#v, want %#v", what, got, want)
	}
}

func TestVerbFlags(t *testing.T) {
	t.Run("validate", func(t *testing.T) {
		o := parse(t, newValidateCmd, "--staged", "--max-file-bytes", "2MiB", "-o", "sarif", "--path-prefix", "repo/catalog", "cat")
		check(t, "dir", o.dir, "cat")
		check(t, "staged", o.staged, true)
		check(t, "output", o.out, outputFlags{format: "sarif", root: "repo/catalog"})
		check(t, "max file size", o.limits.limits(nil).MaxFileBytes, int64(2<<20))
		o = parse(t, newValidateCmd, "--changed-since", "origin/main")
		check(t, "dir without an argument", o.dir, "")
		check(t, "changed since", o.changedSince, "origin/main")
		check(t, "default output", o.out.format, "text")
	})
	t.Run("check-images", func(t *testing.T) {
		o := parse(t, newCheckImagesCmd, "--concurrency", "3", "--require-digest", "--allowed-registry", "quay.io,ghcr.io",
			"--allowed-registry", "registry.example", "--require-platform", "linux/arm64", "cat")
		check(t, "dir", o.dir, "cat")
		check(t, "concurrency", o.checker.Concurrency, 3)
		check(t, "require digest", o.checker.Policy.RequireDigest, true)
		check(t, "allowed registries", o.checker.Policy.AllowedRegistries, []string{"quay.io", "ghcr.io", "registry.example"})
		check(t, "platforms", o.checker.Policy.RequiredPlatforms, []string{"linux/arm64"})
	})
	t.Run("render", func(t *testing.T) {
		o := parse(t, newRenderCmd, "--check", "-c", "refs.yaml", "--output-dir", "out", "--format", "json", "--no-cache",
			"--concurrency", "2", "--repo", "r", "--package", "p", "--offline", "--seed-from", "base", "--template-cache-dir", "c")
		check(t, "config", o.cfgPath, "refs.yaml")
		check(t, "output dir", o.dir, "out")
		check(t, "check", o.check, true)
		check(t, "format", o.opts.Format, "json")
		check(t, "no cache", o.opts.NoCache, true)
		check(t, "concurrency", o.opts.Concurrency, 2)
		check(t, "repository", o.repo, repoFlags{repo: "r", pkg: "p", offline: true, seedFrom: "base", cacheDir: "c"})
		o = parse(t, newRenderCmd)
		check(t, "default config", o.cfgPath, "catalog.yaml")
		check(t, "default repository", o.repo.repo, ".")
	})
	t.Run("bump", func(t *testing.T) {
		o := parse(t, newBumpCmd, "-c", "refs.yaml", "foo", "quay.io/foo@sha256:1")
		check(t, "bump", [3]string{o.cfgPath, o.reference, o.image}, [3]string{"refs.yaml", "foo", "quay.io/foo@sha256:1"})
	})
	t.Run("fmt", func(t *testing.T) {
		o := parse(t, newFmtCmd, "--check", "--format", "yaml")
		check(t, "fmt", [3]any{o.dir, o.format, o.check}, [3]any{"", "yaml", true})
	})
	t.Run("init", func(t *testing.T) {
		o := parse(t, newInitCmd)
		check(t, "init defaults", [2]any{o.repo, o.force}, [2]any{".", false})
		o = parse(t, newInitCmd, "--repo", "r", "--force")
		check(t, "init", [2]any{o.repo, o.force}, [2]any{"r", true})
	})
	t.Run("render --staged", func(t *testing.T) {
		o := parse(t, newRenderCmd, "--check", "--staged")
		check(t, "staged", [2]bool{o.check, o.repo.staged}, [2]bool{true, true})
	})
}

// A command line the parser rejects never reaches the run function (nothing is done half-way) and is a
// usage error.
func TestRejectedCommandLinesRunNothing(t *testing.T) {
	for _, args := range [][]string{
		{"--staged", "--changed-since", "HEAD"},
		{"-o", "xml"},
		{"a", "b"},
		{"--max-file-bytes", "lots"},
	} {
		rejects(t, "validate", newValidateCmd, args)
	}
	for _, args := range [][]string{{"--staged", "--package", "p"}, {"x"}} {
		rejects(t, "render", newRenderCmd, args)
	}
}

// rejects checks that verb's command line args is an error that runs nothing.
func rejects[O any](t *testing.T, verb string, newCmd func(runner[O]) *cobra.Command, args []string) {
	t.Helper()
	ran := false
	cmd := newCmd(func(context.Context, *O) error { ran = true; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	if err := cmd.ExecuteContext(t.Context()); err == nil || ran {
		t.Errorf("%s %s: err %v, ran %v; want an error and nothing run", verb, strings.Join(args, " "), err, ran)
	}
}
