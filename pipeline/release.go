package pipeline

import (
	"path"
	"strings"

	"github.com/catalogbot/catalogbot/render/template"
)

// ReleaseOnly reports whether the change is nothing but a release of package pkg: it merges, every path
// it changes is one of pkg's catalog templates (operators/<dir>/catalog-templates/...) or a file of pkg's
// directory in a catalog of the layout, and every package those files name is pkg (blob identity, so a
// blob of another package filed in pkg's directory is not a release of pkg). It says nothing about who
// wrote the change: the front-end decides that (the App's own release pull request, by its record).
func (c *Change) ReleaseOnly(pkg string) bool {
	if c == nil || c.Result == nil || c.changes == nil || c.Attribution == nil || c.Layout == nil || c.Rules == nil || c.Rules.Config == nil {
		return false
	}
	if len(c.changes.paths) == 0 || len(c.changes.refEntries) > 0 || c.changes.refsGlobal || len(c.Attribution.Other) > 0 {
		return false
	}
	for p := range c.Attribution.Packages {
		if p != pkg {
			return false
		}
	}
	dir := c.Rules.Config.Catalogs.PackageDir(pkg)
	templates := path.Join(template.OperatorsDir, dir, template.TemplatesDir) + "/"
	for _, p := range c.changes.paths {
		ok := strings.HasPrefix(p, templates)
		for _, cat := range c.Layout.Catalogs {
			ok = ok || strings.HasPrefix(p, path.Join(path.Clean(cat.Dir), dir)+"/")
		}
		if !ok {
			return false
		}
	}
	return true
}
