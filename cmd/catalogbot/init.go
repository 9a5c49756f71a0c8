package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/filetree"
	"github.com/catalogbot/catalogbot/render"
	"github.com/catalogbot/catalogbot/render/template"
)

// initOptions are what init's command line says.
type initOptions struct {
	io    streams
	repo  string
	force bool
}

func newInitCmd(runF runner[initOptions]) *cobra.Command {
	o := &initOptions{}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write the checkout's " + config.ConfigFile + " from its layout and committed catalogs, then prove it offline",
		Long: `init looks at the checkout (--repo, default the working directory) and writes a complete
` + config.ConfigFile + ` for it, without asking anything:

- a template-driven repository (operators/<package>/ci.yaml mapping templates to catalogs/<version>/):
  the catalogs pattern, the index image of config.yaml, the owners files, the maintainers; and, found by
  rendering every mapping offline with each supported opm and migration level, the migration the
  committed catalogs have and from which catalog on, the opm each package was rendered with (a
  per-package pin where it is not the repository's), and the package of a directory that is not the
  package's name; release.bundleImage, the pattern ({package}, {version}) the bundle images the templates
  name show, when one explains four of five of them (init says how many);
- a references config (catalog.yaml with references:): the config file and the catalog directory it
  renders into;
- a single file-based catalog: its directory and format.

Then it proves the configuration: it renders every template mapping offline from the committed catalogs
and compares the result with them, validates every catalog, and prints per package what reproduces and
what does not, and why. It never overwrites an existing ` + config.ConfigFile + ` without --force.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.io = streamsOf(cmd)
			return orDefault(runF, runInit)(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.repo, "repo", ".", "the checkout to configure")
	cmd.Flags().BoolVar(&o.force, "force", false, "overwrite an existing "+config.ConfigFile)
	return cmd
}

// runInit detects the checkout's layout, writes its configuration and proves it.
func runInit(ctx context.Context, o *initOptions) error {
	file := filepath.Join(o.repo, config.ConfigFile)
	if _, err := os.Lstat(file); err == nil && !o.force {
		return diag.UsageError(fmt.Errorf("%s already exists: init never overwrites it without --force", file))
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return diag.UsageError(fmt.Errorf("reading %s: %w", file, err))
	}
	var text, report string
	var proof func() error
	switch cats := templateCatalogDirs(o.repo); {
	case cats != nil:
		d, err := template.Detect(ctx, o.repo, cats)
		if err != nil {
			return fmt.Errorf("detecting how %s's catalogs were rendered: %w", o.repo, err)
		}
		bi, err := detectBundleImage(ctx, o.repo, d.Catalogs)
		if err != nil {
			return fmt.Errorf("detecting %s's bundle image pattern: %w", o.repo, err)
		}
		text, report = templateConfig(o.repo, d)+bundleImageConfig(bi), bundleImageReport(bi)
		proof = func() error { return proveTemplates(ctx, o.io, o.repo) }
	default:
		var dir string
		var err error
		if text, dir, err = plainConfig(ctx, o.repo); err != nil {
			return err
		}
		refs := strings.Contains(text, "\nreferences:\n")
		proof = func() error { return proveCatalog(ctx, o.io, o.repo, dir, refs) }
	}
	if _, ds, err := config.ParseConfig(config.ConfigFile, []byte(text)); err != nil {
		return fmt.Errorf("the configuration init wrote does not parse (%v): %s", err, ds)
	}
	if err := filetree.WriteFileBytes(file, 0o644, []byte(text)); err != nil {
		return fmt.Errorf("writing %s: %w", file, err)
	}
	fmt.Fprintf(o.io.out, "wrote %s:\n\n%s\n%s", file, text, report)
	return proof()
}

// templateCatalogDirs are the catalogs of a template-driven checkout (the directories of catalogs/,
// in version order, when some operators/<package>/ci.yaml maps templates to catalogs), or nil.
func templateCatalogDirs(root string) []template.Catalog {
	names, err := template.CommittedCatalogs(root, catalogsDir)
	if err != nil || len(names) == 0 {
		return nil
	}
	cis, _ := filepath.Glob(filepath.Join(root, template.OperatorsDir, "*", template.CIFile))
	mapped := false
	for _, ci := range cis {
		data, err := os.ReadFile(ci)
		if err != nil {
			continue
		}
		if m, err := template.ParseCI(data, ci); err == nil && len(m) > 0 {
			mapped = true
			break
		}
	}
	if !mapped {
		return nil
	}
	cfg := config.Config{Catalogs: config.CatalogsConfig{Pattern: catalogsDir + "/" + config.VersionPlaceholder}}
	resolved, err := cfg.ResolveCatalogs(root)
	if err != nil {
		return nil
	}
	return template.CatalogsOf(resolved)
}

// catalogsDir is where a template-driven checkout keeps its catalogs, one directory per version.
const catalogsDir = "catalogs"

// upstreamConfig is what init reads of a community-operators checkout's own config.yaml.
type upstreamConfig struct {
	Maintainers             []string `yaml:"maintainers"`
	AllowedBundleRegistries []string `yaml:"allowed_bundle_registries"`
	IndexImage              struct {
		Repository string `yaml:"repository"`
	} `yaml:"index_image"`
}

// templateConfig is the configuration of a template-driven checkout with the detected settings.
func templateConfig(root string, d *template.Detection) string {
	var up upstreamConfig
	if data, err := os.ReadFile(filepath.Join(root, "config.yaml")); err == nil {
		_ = yaml.Unmarshal(data, &up) // a config.yaml of another shape only gives fewer defaults
	}
	var b strings.Builder
	b.WriteString("# Written by catalogbot init from this checkout's layout and committed catalogs\n")
	b.WriteString("# (docs/configuration.md). The proof it printed says what reproduces.\n")
	fmt.Fprintf(&b, "apiVersion: %s\nkind: %s\n", config.APIVersion, config.Kind)
	if len(up.Maintainers) > 0 {
		b.WriteString("# from config.yaml\nmaintainers:\n")
		for _, m := range up.Maintainers {
			fmt.Fprintf(&b, "  - %s\n", m)
		}
	}
	b.WriteString("# each package's reviewers\n")
	fmt.Fprintf(&b, "ownersFrom: %s/%s/%s\n", template.OperatorsDir, config.PackagePlaceholder, template.CIFile)
	var registries []string
	for _, r := range up.AllowedBundleRegistries {
		if r = strings.TrimSuffix(r, "/"); r != "" {
			registries = append(registries, r)
		}
	}
	if len(registries) > 0 {
		b.WriteString("images:\n  # config.yaml's allowed_bundle_registries\n  allowedRegistries:\n")
		for _, r := range registries {
			fmt.Fprintf(&b, "    - %s\n", r)
		}
	}
	b.WriteString("catalogs:\n")
	fmt.Fprintf(&b, "  pattern: %s/%s\n", catalogsDir, config.VersionPlaceholder)
	names := make([]string, 0, len(d.Catalogs))
	for _, c := range d.Catalogs {
		names = append(names, c.Name)
	}
	b.WriteString("  # one catalog per cluster version: a new one is added here, then `catalogbot promote --to` it\n")
	fmt.Fprintf(&b, "  versions: [%s]\n", strings.Join(names, ", "))
	image := "quay.io/example/index"
	if up.IndexImage.Repository != "" {
		image = up.IndexImage.Repository
		b.WriteString("  # config.yaml's index_image.repository, one tag per catalog\n")
	} else {
		b.WriteString("  # where each catalog is published, one tag per catalog: set your own repository\n")
	}
	fmt.Fprintf(&b, "  image: %s:%s\n", image, config.VersionPlaceholder)
	for _, c := range d.Catalogs {
		if k, ok := config.KubernetesOf(c.Name); ok {
			fmt.Fprintf(&b, "  # %s: OpenShift %s, Kubernetes %s\n", c.Name, strings.TrimPrefix(c.Name, "v"), k)
		} else {
			fmt.Fprintf(&b, "  # %s: not an OpenShift 4.Y version (smoke needs a catalogs.list entry with kubernetes:)\n", c.Name)
		}
	}
	if d.MigrateLevel != "" {
		b.WriteString("  # the committed catalogs' bundles carry olm.csv.metadata")
		if d.MigrateFrom != "" {
			fmt.Fprintf(&b, " from %s on", d.MigrateFrom)
		}
		fmt.Fprintf(&b, "\n  migrateLevel: %s\n", d.MigrateLevel)
		if d.MigrateFrom != "" {
			fmt.Fprintf(&b, "  migrateFrom: %s\n", d.MigrateFrom)
		}
	}
	b.WriteString("  # the opm whose rendering most packages' committed catalogs are\n")
	fmt.Fprintf(&b, "  opmVersion: %s\n", d.OPMVersion)
	if len(d.Packages) > 0 {
		b.WriteString("  packages:\n")
		for _, dir := range slices.Sorted(maps.Keys(d.Packages)) {
			p := d.Packages[dir]
			fmt.Fprintf(&b, "    %s:\n", dir)
			if p.Package != "" {
				fmt.Fprintf(&b, "      # %s/%s/ and each catalog's %s/ hold package %s\n      package: %s\n", template.OperatorsDir, dir, dir, p.Package, p.Package)
			}
			if p.OPMVersion != "" {
				fmt.Fprintf(&b, "      # its committed catalogs are opm %s's render\n      opmVersion: %s\n", p.OPMVersion, p.OPMVersion)
			}
		}
	}
	return b.String()
}

// plainConfig is the configuration of a checkout that is one catalog: rendered from a references config
// (catalog.yaml with references:) or kept by hand in a directory of package directories. dir is the
// catalog directory, relative to root.
func plainConfig(ctx context.Context, root string) (text, dir string, err error) {
	header := fmt.Sprintf("# Written by catalogbot init from this checkout's layout (docs/configuration.md).\napiVersion: %s\nkind: %s\n", config.APIVersion, config.Kind)
	if data, err := os.ReadFile(filepath.Join(root, "catalog.yaml")); err == nil {
		if refs, ds := render.ParseConfig(data, "catalog.yaml"); !diag.HasErrors(ds) && len(refs.References) > 0 && isDirName(refs.Name) {
			dir = refs.Name
			return header + fmt.Sprintf("# catalog.yaml's %d references render into %s/\nreferences:\n  file: catalog.yaml\ncatalog:\n  dir: %s\n  format: yaml\n",
				len(refs.References), dir, dir), dir, nil
		}
	}
	best, most, format := "", 0, ""
	entries, err := os.ReadDir(root)
	if err != nil {
		return "", "", diag.UsageError(fmt.Errorf("reading %s: %w", root, err))
	}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		res, err := catalog.LoadDir(ctx, filepath.Join(root, e.Name()), catalog.LoadOptions{Lean: true})
		if err != nil || res.Refused {
			continue
		}
		if n := len(res.Catalog.Packages); n > most {
			best, most, format = e.Name(), n, catalog.FormatJSON
			if len(res.Files) > 0 && fileFormat(filepath.Join(root, e.Name()), res.Files[0]) == catalog.FormatYAML {
				format = catalog.FormatYAML
			}
		}
	}
	if best == "" {
		return "", "", diag.UsageError(fmt.Errorf("%s holds no catalog init recognises: no operators/<package>/ci.yaml mapping templates to %s/<version>/, no catalog.yaml with references, no directory of olm.package blobs", root, catalogsDir))
	}
	return header + fmt.Sprintf("# %s/ holds %s\ncatalog:\n  dir: %s\n  format: %s\n", best, template.Plural(most, "package"), best, format), best, nil
}

// isDirName reports whether name is one plain, local path element.
func isDirName(name string) bool {
	return name != "" && filepath.IsLocal(name) && !strings.ContainsAny(name, `/\`)
}
