package pipeline

import (
	"slices"
	"testing"

	"github.com/catalogbot/catalogbot/config"
)

// A push gains the catalogs its configuration lists (catalogs.versions or catalogs.list) that the one
// before did not; a configuration before that listed none gains nothing, whatever the new one lists.
func TestCatalogsGained(t *testing.T) {
	versions := func(vs ...string) *config.Config {
		return &config.Config{Catalogs: config.CatalogsConfig{Pattern: "catalogs/{version}", Versions: vs}}
	}
	list := func(vs ...string) *config.Config {
		c := &config.Config{}
		for _, v := range vs {
			c.Catalogs.List = append(c.Catalogs.List, config.CatalogEntry{Name: v, Dir: "catalogs/" + v})
		}
		return c
	}
	for _, tc := range []struct {
		name          string
		before, after *config.Config
		want          []string
	}{
		{"one added", versions("v4.20", "v4.21"), versions("v4.20", "v4.21", "v4.22"), []string{"v4.22"}},
		{"two added, in order", versions("v4.21"), versions("v4.23", "v4.21", "v4.22"), []string{"v4.23", "v4.22"}},
		{"unchanged", versions("v4.20", "v4.21"), versions("v4.21", "v4.20"), nil},
		{"one removed", versions("v4.20", "v4.21"), versions("v4.21"), nil},
		{"list entries", list("v4.21"), list("v4.21", "v4.22"), []string{"v4.22"}},
		{"before listed none", versions(), versions("v4.20", "v4.21"), nil},
		{"no configuration before", nil, versions("v4.21", "v4.22"), nil},
	} {
		if got := CatalogsGained(tc.before, tc.after); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
