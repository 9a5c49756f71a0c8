package template

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/catalogbot/catalogbot/diag"
)

// CatalogSpan names a set of catalogs compactly: runs of catalogs that are consecutive in order are
// written first-last ("catalogs v4.12-v4.22", "catalogs v4.12-v4.14, v4.16").
func CatalogSpan(names, order []string) string {
	pos := map[string]int{}
	for i, n := range order {
		pos[n] = i
	}
	sorted := slices.Clone(names)
	slices.SortStableFunc(sorted, func(a, b string) int { return pos[a] - pos[b] })
	var parts []string
	for i := 0; i < len(sorted); {
		j := i
		for j+1 < len(sorted) && pos[sorted[j+1]] == pos[sorted[j]]+1 {
			j++
		}
		switch {
		case j == i:
			parts = append(parts, sorted[i])
		case j == i+1:
			parts = append(parts, sorted[i], sorted[j])
		default:
			parts = append(parts, sorted[i]+"-"+sorted[j])
		}
		i = j + 1
	}
	if len(names) == 1 {
		return "catalog " + parts[0]
	}
	return "catalogs " + strings.Join(parts, ", ")
}

// GroupDrift keeps a drift diagnostic on every catalog file that differs, but prints each distinct diff
// once: the first file of a group of identical diffs (the same change in the same place of the same
// package) carries it and names the group's catalogs; the others refer to it.
func GroupDrift(ds []diag.Diagnostic, cats []Catalog) []diag.Diagnostic {
	order := make([]string, 0, len(cats))
	for _, c := range cats {
		order = append(order, c.Name)
	}
	catalogOf := func(file string) string {
		for _, c := range cats {
			if strings.HasPrefix(file, path.Clean(c.Dir)+"/") {
				return c.Name
			}
		}
		return ""
	}
	type group struct {
		first    int
		catalogs []string
	}
	groups := map[string]*group{}
	keyOf := make([]string, len(ds))
	for i, d := range ds {
		head, body, ok := strings.Cut(d.Message, "\n")
		name := catalogOf(d.File)
		if d.Rule != "render-drift" || !ok || name == "" || !strings.HasSuffix(head, ":") {
			continue
		}
		k := d.Package + "\x00" + fmt.Sprint(d.Line) + "\x00" + strings.ReplaceAll(body, d.File, "FILE")
		keyOf[i] = k
		g, seen := groups[k]
		if !seen {
			g = &group{first: i}
			groups[k] = g
		}
		g.catalogs = append(g.catalogs, name)
	}
	for i := range ds {
		g := groups[keyOf[i]]
		if keyOf[i] == "" || len(g.catalogs) < 2 {
			continue
		}
		head, body, _ := strings.Cut(ds[i].Message, "\n")
		span := CatalogSpan(g.catalogs, order)
		if i == g.first {
			ds[i].Message = strings.TrimSuffix(head, ":") + " (the same diff in " + span + "):\n" + body
			continue
		}
		ds[i].Message = strings.TrimSuffix(head, ":") + ": the same diff as " + ds[g.first].File + " (" + span + ")"
	}
	return ds
}
