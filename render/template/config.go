package template

import "github.com/catalogbot/catalogbot/config"

// CatalogsOf are the catalogs of a repository's configuration (config.Config.ResolveCatalogs) as the
// renderer sees them.
func CatalogsOf(cats []config.Catalog) []Catalog {
	out := make([]Catalog, 0, len(cats))
	for _, c := range cats {
		var pkgs map[string]Package
		for dir, p := range c.Packages {
			if pkgs == nil {
				pkgs = map[string]Package{}
			}
			pkgs[dir] = Package{Name: p.Package, OPMVersion: OPMVersion(p.OPMVersion)}
		}
		out = append(out, Catalog{Name: c.Name, Dir: c.Dir, MigrateLevel: c.MigrateLevel, OPMVersion: OPMVersion(c.OPMVersion), Packages: pkgs})
	}
	return out
}
