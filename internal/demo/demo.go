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

	"github.com/go-git/go-git/v5/plumbing"

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

// Run runs the demo, writing reports to out and progress to progress. Its steps, in order: images into an
// embedded registry, the catalog repository with two pull requests, the pipeline over both (mallory's
// rejected, alice's passing and merged), the catalog image of the merged main published.
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
	d := &demo{out: out, progress: progress, format: o.Format, host: reg.Host, res: &Result{}}
	d.say("embedded registry at %s", reg.Host)
	bundles, base, err := d.pushImages(ctx)
	if err != nil {
		return nil, err
	}
	prs, err := d.makeRepo(filepath.Join(dir, "catalog-repo"), bundles)
	if err != nil {
		return nil, err
	}
	if err := d.pullRequests(ctx, prs); err != nil {
		return nil, err
	}
	return d.publish(ctx, base, prs.headSHA)
}

// demo is one run of the demo: where it writes, its registry, and what it did so far.
type demo struct {
	out, progress io.Writer
	format        string
	host          string // the embedded registry's
	res           *Result
}

func (d *demo) say(f string, a ...any) { fmt.Fprintf(d.progress, "demo: "+f+"\n", a...) }

// pushImages pushes the operator, its bundles v0.1.0 and v0.2.0 and a two-platform base for the catalog
// image.
func (d *demo) pushImages(ctx context.Context) (bundles []*catalog.Bundle, base string, err error) {
	for _, v := range []struct{ version, replaces string }{{"0.1.0", ""}, {"0.2.0", "0.1.0"}} {
		op, err := pushOperatorImage(ctx, d.host, v.version)
		if err != nil {
			return nil, "", err
		}
		b, err := pushBundle(ctx, d.host, bundleSpec{Package: pkg, Version: v.version, Replaces: v.replaces, Operator: op})
		if err != nil {
			return nil, "", err
		}
		d.say("pushed bundle %s", b.Image)
		bundles = append(bundles, b)
	}
	if base, err = pushBase(ctx, d.host); err != nil {
		return nil, "", err
	}
	d.say("pushed base image %s (linux/amd64, linux/arm64)", base)
	return bundles, base, nil
}

// demoRepo is the demo's catalog repository and the commits its pull requests are about.
type demoRepo struct {
	g                *gitRepo
	repo             *gitrepo.Repo
	baseSHA, headSHA plumbing.Hash
}

// makeRepo makes the repository: main holds v0.1.0; alice's pull request adds v0.2.0; mallory's, by
// someone who owns nothing, rewrites the released v0.1.0.
func (d *demo) makeRepo(repoDir string, bundles []*catalog.Bundle) (*demoRepo, error) {
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
	r := &demoRepo{g: g}
	if r.baseSHA, err = g.commit("Add demo-operator v0.1.0", "catalog-admin"); err != nil {
		return nil, err
	}
	if r.headSHA, err = g.branchWith("alice/v0.2.0", r.baseSHA, sampleCatalog(bundles), "demo-operator: release v0.2.0", "alice"); err != nil {
		return nil, err
	}
	tampered := sampleCatalog(bundles[:1])
	tampered.Bundles[0].Image = bundles[1].Image
	if _, err := g.branchWith("mallory/retag", r.baseSHA, tampered, "demo-operator: point v0.1.0 at a new image", "mallory"); err != nil {
		return nil, err
	}
	if err := g.checkout("main"); err != nil {
		return nil, err
	}
	d.say("catalog repository at %s (branches main, alice/v0.2.0, mallory/retag)", repoDir)
	d.res.RepoDir = repoDir
	if r.repo, err = gitrepo.Open(repoDir); err != nil {
		return nil, err
	}
	return r, nil
}

// pullRequests runs the pipeline over both pull requests: mallory's must fail, alice's must pass, and is
// then merged into main.
func (d *demo) pullRequests(ctx context.Context, r *demoRepo) error {
	bad, err := d.pullRequest(ctx, r.repo, "mallory/retag", "mallory")
	if err != nil {
		return err
	}
	if bad.Verdict() == report.Pass {
		return fmt.Errorf("the pipeline passed mallory's pull request, which it must reject")
	}
	d.say("mallory/retag: %s, not merged", bad.Verdict())
	good, err := d.pullRequest(ctx, r.repo, "alice/v0.2.0", "alice")
	if err != nil {
		return err
	}
	if good.Verdict() != report.Pass {
		return fmt.Errorf("alice's pull request did not pass (%s)", good.Verdict())
	}
	if err := r.g.fastForward(r.baseSHA, r.headSHA); err != nil {
		return err
	}
	d.say("alice/v0.2.0 passed: merged %s into main", r.headSHA.String()[:12])
	return nil
}

// pullRequest runs the pipeline over one pull request and renders its report.
func (d *demo) pullRequest(ctx context.Context, repo *gitrepo.Repo, head, author string) (*report.Report, error) {
	d.say("pull request %s by %s: running the pipeline", head, author)
	r, err := pipeline.Run(ctx, pipeline.Input{Repo: repo, Base: "main", Head: head, Author: author, Observer: pipeline.TextProgress(d.progress)})
	if err != nil {
		return nil, err
	}
	r.Title = fmt.Sprintf("pull request %s by %s", head, author)
	d.res.Reports = append(d.res.Reports, r)
	return r, report.Render(d.out, r, d.format, "", "demo", false)
}

// publish builds the merged main's catalog image on base and pushes it to the registry. A failed publish
// still returns the result, with its report.
func (d *demo) publish(ctx context.Context, base string, headSHA plumbing.Hash) (*Result, error) {
	target := d.host + "/demo/catalog:latest"
	st, digest := pipeline.Publish(ctx, pipeline.PublishInput{CatalogDir: filepath.Join(d.res.RepoDir, "catalog"), Target: target, Build: build.Options{Base: base}})
	pub := &report.Report{Title: "publish main at " + headSHA.String()[:12], Stages: []report.Stage{st}, Outputs: map[string]string{}}
	if digest != "" {
		pub.Outputs["catalog_digest"] = digest
	}
	d.res.Reports = append(d.res.Reports, pub)
	if err := report.Render(d.out, pub, d.format, "", "demo", false); err != nil {
		return nil, err
	}
	if digest == "" {
		return d.res, fmt.Errorf("publishing the catalog image failed: %s", st.Err)
	}
	d.res.Digest = digest
	d.say("catalog image %s", digest)
	return d.res, nil
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
