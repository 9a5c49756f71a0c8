package template

import "github.com/catalogbot/catalogbot/config"

// CatalogsOf are the catalogs of a repository's configuration (config.Config.ResolveCatalogs) as the
// renderer sees them.
func CatalogsOf(cats []config.Catalog) []Catalog {
	out := make([]Catalog, 0, len(cats))
	for _, c := range cats {
		out = append(out, Catalog{Name: c.Name, Dir: c.Dir, MigrateLevel: c.MigrateLevel, OPMVersion: OPMVersion(c.OPMVersion), Packages: c.Packages})
	}
	return out
}
