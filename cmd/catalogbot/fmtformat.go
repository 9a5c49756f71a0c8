package main

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/diag"
)

// fileFormat is the format a catalog file is written in: by its extension, else by its content as the
// loader reads it (JSON when it starts with '{').
func fileFormat(dir, file string) string {
	switch strings.ToLower(path.Ext(file)) {
	case ".yaml", ".yml":
		return catalog.FormatYAML
	case ".json":
		return catalog.FormatJSON
	}
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(file)))
	if err == nil && len(bytes.TrimSpace(data)) > 0 && bytes.TrimSpace(data)[0] != '{' {
		return catalog.FormatYAML
	}
	return catalog.FormatJSON
}

// keptFormats is the format fmt writes each package's directory in (and "" for the root file of
// other-schema blobs of no package): the format of the file that holds the package's olm.package blob
// (or its first channel or bundle), so a YAML catalog stays YAML.
func keptFormats(dir string, c *catalog.Catalog) map[string]string {
	out := map[string]string{}
	for pkg, pos := range c.Blobs() {
		if _, ok := out[pkg]; !ok && pos.File != "" {
			out[pkg] = fileFormat(dir, pos.File)
		}
	}
	return out
}

// formattedTree writes the formatted catalog into want: each package in its kept format (keptFormats),
// or all in format when it is set. It returns the one format of the tree ("" when it mixes both).
func formattedTree(tmp, want, dir string, c *catalog.Catalog, format string) (string, error) {
	if format != "" {
		return format, catalog.WriteDir(want, c, format)
	}
	formats := keptFormats(dir, c)
	one := ""
	for _, f := range formats {
		if one == "" {
			one = f
		} else if one != f {
			one = "mixed"
		}
	}
	if one == "" {
		one = catalog.FormatJSON
	}
	if one != "mixed" {
		return one, catalog.WriteDir(want, c, one)
	}
	// both formats: write the catalog in each, and take every package's directory from its own
	trees := map[string]string{}
	for _, f := range []string{catalog.FormatJSON, catalog.FormatYAML} {
		trees[f] = filepath.Join(tmp, f)
		if err := catalog.WriteDir(trees[f], c, f); err != nil {
			return "", err
		}
	}
	if err := os.MkdirAll(want, 0o755); err != nil {
		return "", err
	}
	for pkg, f := range formats {
		from, to := filepath.Join(trees[f], pkg), filepath.Join(want, pkg)
		if pkg == "" {
			from, to = filepath.Join(trees[f], "catalog."+f), filepath.Join(want, "catalog."+f)
		}
		if err := os.Rename(from, to); err != nil && !os.IsNotExist(err) {
			return "", fmt.Errorf("format %s: %w", pkg, err)
		}
	}
	return "", nil
}

// errMixedFormats is fmt's answer to a rewrite of a catalog whose packages use both formats.
func errMixedFormats(dir string) error {
	return diag.UsageError(fmt.Errorf("%s holds packages in both JSON and YAML: pass --format json or --format yaml to rewrite it in one", dir))
}
