// Package demo is catalogbot's self-contained demonstration, the README's main job: it builds a catalog
// repository with a pull request in a temp dir, starts an embedded registry seeded with bundle and base
// images, runs the full pull-request pipeline, merges the change locally when it passes, then builds and
// pushes the catalog image and prints its digest. No GitHub, no Docker, no network beyond loopback.
package demo

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/catalogbot/catalogbot/build"
	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/internal/registrytest"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/report"
)

const pkg = "demo-operator"

const repoConfig = `apiVersion: catalogbot.dev/v1alpha1
kind: Config
catalog:
  dir: catalog
  format: json
maintainers: [catalog-admin]
owners:
  demo-operator: [alice]
graph:
  allowModifyReleased: false
`

// Options tune the demo.
type Options struct {
	// Dir is where the repository is created; empty means a new temp dir, removed at the end unless Keep.
	Dir  string
	Keep bool
	// Format renders each report (text, json, markdown, ...).
	Format string
}

// Result is what the demo did.
type Result struct {
	Reports []*report.Report
	Digest  string
	RepoDir string
}

// Run runs the demo, writing reports to out and progress to progress.
func Run(ctx context.Context, out, progress io.Writer, o Options) (*Result, error) {
	dir := o.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "catalogbot-demo-")
		if err != nil {
			return nil, err
		}
		dir = tmp
		if !o.Keep {
			defer os.RemoveAll(tmp)
		}
	}
	reg, stop, err := registrytest.Serve(ctx)
	if err != nil {
		return nil, err
	}
	defer stop()
	say := func(f string, a ...any) { fmt.Fprintf(progress, "demo: "+f+"\n", a...) }
	say("embedded registry at %s", reg.Host)

	// Images: the operator, its bundles v0.1.0 and v0.2.0, a two-platform base for the catalog image.
	var bundles []*catalog.Bundle
	for _, v := range []struct{ version, replaces string }{{"0.1.0", ""}, {"0.2.0", "0.1.0"}} {
		op, err := pushOperatorImage(ctx, reg.Host, v.version)
		if err != nil {
			return nil, err
		}
		b, err := pushBundle(ctx, reg.Host, bundleSpec{Package: pkg, Version: v.version, Replaces: v.replaces, Operator: op})
		if err != nil {
			return nil, err
		}
		say("pushed bundle %s", b.Image)
		bundles = append(bundles, b)
	}
	base, err := pushBase(ctx, reg.Host)
	if err != nil {
		return nil, err
	}
	say("pushed base image %s (linux/amd64, linux/arm64)", base)

	// The repository: main holds v0.1.0; alice's pull request adds v0.2.0.
	repoDir := filepath.Join(dir, "catalog-repo")
	g, err := initRepo(repoDir)
	if err != nil {
		return nil, err
	}
	if err := g.write(".catalogbot.yaml", []byte(repoConfig)); err != nil {
		return nil, err
	}
	if err := g.writeCatalog(sampleCatalog(bundles[:1])); err != nil {
		return nil, err
	}
	baseSHA, err := g.commit("Add demo-operator v0.1.0", "catalog-admin")
	if err != nil {
		return nil, err
	}
	if err := g.branch("alice/v0.2.0", baseSHA); err != nil {
		return nil, err
	}
	if err := g.checkout("alice/v0.2.0"); err != nil {
		return nil, err
	}
	if err := g.writeCatalog(sampleCatalog(bundles)); err != nil {
		return nil, err
	}
	headSHA, err := g.commit("demo-operator: release v0.2.0", "alice")
	if err != nil {
		return nil, err
	}
	// A second pull request, by someone who owns nothing, that also rewrites the released v0.1.0.
	if err := g.branch("mallory/retag", baseSHA); err != nil {
		return nil, err
	}
	if err := g.checkout("mallory/retag"); err != nil {
		return nil, err
	}
	tampered := sampleCatalog(bundles[:1])
	tampered.Bundles[0].Image = bundles[1].Image
	if err := g.writeCatalog(tampered); err != nil {
		return nil, err
	}
	if _, err := g.commit("demo-operator: point v0.1.0 at a new image", "mallory"); err != nil {
		return nil, err
	}
	if err := g.checkout("main"); err != nil {
		return nil, err
	}
	say("catalog repository at %s (branches main, alice/v0.2.0, mallory/retag)", repoDir)

	repo, err := gitrepo.Open(repoDir)
	if err != nil {
		return nil, err
	}
	res := &Result{RepoDir: repoDir}
	runPR := func(head, author string) (*report.Report, error) {
		say("pull request %s by %s: running the pipeline", head, author)
		r, err := pipeline.Run(ctx, pipeline.Input{Repo: repo, Base: "main", Head: head, Author: author, Observer: pipeline.TextProgress(progress)})
		if err != nil {
			return nil, err
		}
		r.Title = fmt.Sprintf("pull request %s by %s", head, author)
		res.Reports = append(res.Reports, r)
		return r, report.Render(out, r, o.Format, "", "demo", false)
	}
	bad, err := runPR("mallory/retag", "mallory")
	if err != nil {
		return nil, err
	}
	if bad.Verdict() == report.Pass {
		return nil, fmt.Errorf("the pipeline passed mallory's pull request, which it must reject")
	}
	say("mallory/retag: %s, not merged", bad.Verdict())
	good, err := runPR("alice/v0.2.0", "alice")
	if err != nil {
		return nil, err
	}
	if good.Verdict() != report.Pass {
		return nil, fmt.Errorf("alice's pull request did not pass (%s)", good.Verdict())
	}
	if err := g.fastForward(baseSHA, headSHA); err != nil {
		return nil, err
	}
	say("alice/v0.2.0 passed: merged %s into main", headSHA.String()[:12])

	target := reg.Host + "/demo/catalog:latest"
	st, digest := pipeline.Publish(ctx, pipeline.PublishInput{CatalogDir: filepath.Join(repoDir, "catalog"), Target: target, Build: build.Options{Base: base}})
	pub := &report.Report{Title: "publish main at " + headSHA.String()[:12], Stages: []report.Stage{st}, Outputs: map[string]string{}}
	if digest != "" {
		pub.Outputs["catalog_digest"] = digest
	}
	res.Reports = append(res.Reports, pub)
	if err := report.Render(out, pub, o.Format, "", "demo", false); err != nil {
		return nil, err
	}
	if digest == "" {
		return res, fmt.Errorf("publishing the catalog image failed: %s", st.Err)
	}
	res.Digest = digest
	say("catalog image %s", digest)
	return res, nil
}

// sampleCatalog is the demo package with the given bundles in one channel, each replacing the previous.
func sampleCatalog(bundles []*catalog.Bundle) *catalog.Catalog {
	c := &catalog.Catalog{
		Packages: []*catalog.Package{{Schema: catalog.SchemaPackage, Name: pkg, DefaultChannel: "stable",
			Description: "The operator of catalogbot's demo."}},
	}
	ch := &catalog.Channel{Schema: catalog.SchemaChannel, Name: "stable", Package: pkg}
	prev := ""
	for _, b := range bundles {
		ch.Entries = append(ch.Entries, catalog.ChannelEntry{Name: b.Name, Replaces: prev})
		prev = b.Name
		cp := *b
		cp.Properties = append([]catalog.Property(nil), b.Properties...)
		c.Bundles = append(c.Bundles, &cp)
	}
	c.Channels = []*catalog.Channel{ch}
	return c
}
