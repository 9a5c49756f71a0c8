package template

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/catalog"
)

// DescribeDrift says in a sentence what replacing the committed catalog file with the render would
// change: the upgrade edges of released bundles (channel entries the committed file has), bundles added
// or removed, the package blob's fields. A maintainer reads it before re-rendering released history.
// It is "" when either file does not load or nothing but the bytes' form differs.
func DescribeDrift(ctx context.Context, committed, rendered []byte) string {
	a, b := loadOne(ctx, committed), loadOne(ctx, rendered)
	if a == nil || b == nil {
		return ""
	}
	var what []string
	if f := packageFields(a, b); len(f) > 0 {
		what = append(what, "changes the package blob's "+strings.Join(f, ", "))
	}
	type entry struct{ ch, name string }
	edges := func(c *catalog.Catalog) map[entry]catalog.ChannelEntry {
		out := map[entry]catalog.ChannelEntry{}
		for _, ch := range c.Channels {
			for _, e := range ch.Entries {
				out[entry{ch.Name, e.Name}] = e
			}
		}
		return out
	}
	old, new := edges(a), edges(b)
	var changed, dropped, added []string
	for k, e := range old {
		n, ok := new[k]
		switch {
		case !ok:
			dropped = append(dropped, k.name+" from "+k.ch)
		case n.Replaces != e.Replaces || n.SkipRange != e.SkipRange || !slices.Equal(n.Skips, e.Skips):
			changed = append(changed, k.name+" in "+k.ch)
		}
	}
	for k := range new {
		if _, ok := old[k]; !ok {
			added = append(added, k.name+" to "+k.ch)
		}
	}
	if len(changed) > 0 {
		what = append(what, "changes the upgrade edges (replaces, skips, skipRange) of released "+names(changed, "entry", "entries"))
	}
	if len(dropped) > 0 {
		what = append(what, "removes released "+names(dropped, "entry", "entries"))
	}
	if len(added) > 0 {
		what = append(what, "adds "+names(added, "entry", "entries"))
	}
	bundles := func(c *catalog.Catalog) map[string]*catalog.Bundle {
		out := map[string]*catalog.Bundle{}
		for _, bu := range c.Bundles {
			out[bu.Name] = bu
		}
		return out
	}
	ob, nb := bundles(a), bundles(b)
	var bchanged []string
	for name, x := range ob {
		if y, ok := nb[name]; ok && (x.Image != y.Image || !slices.Equal(x.RelatedImages, y.RelatedImages) || !sameProperties(x, y)) {
			bchanged = append(bchanged, name)
		}
	}
	if len(bchanged) > 0 {
		what = append(what, "changes the content of released "+names(bchanged, "bundle", "bundles"))
	}
	if len(what) == 0 {
		return ""
	}
	return "re-rendering " + strings.Join(what, "; ")
}

// loadOne loads one catalog file's bytes (nil when they do not load cleanly).
func loadOne(ctx context.Context, data []byte) *catalog.Catalog {
	res, err := catalog.LoadFS(ctx, fstest.MapFS{"catalog.yaml": {Data: data}}, catalog.LoadOptions{})
	if err != nil || len(res.Diagnostics) > 0 {
		return nil
	}
	return res.Catalog
}

// packageFields names the package blob fields that differ between a and b.
func packageFields(a, b *catalog.Catalog) []string {
	if len(a.Packages) != 1 || len(b.Packages) != 1 {
		return nil
	}
	p, q := a.Packages[0], b.Packages[0]
	var out []string
	if p.DefaultChannel != q.DefaultChannel {
		out = append(out, fmt.Sprintf("defaultChannel (%s -> %s)", p.DefaultChannel, q.DefaultChannel))
	}
	if (p.Icon == nil) != (q.Icon == nil) || p.Icon != nil && (!bytes.Equal(p.Icon.Data, q.Icon.Data) || p.Icon.MediaType != q.Icon.MediaType) {
		out = append(out, "icon")
	}
	if p.Description != q.Description {
		out = append(out, "description")
	}
	return out
}

// sameProperties reports whether two bundles have the same properties, in order.
func sameProperties(x, y *catalog.Bundle) bool {
	return slices.EqualFunc(x.Properties, y.Properties, func(p, q catalog.Property) bool {
		return p.Type == q.Type && bytes.Equal(p.Value, q.Value)
	})
}

// names is "2 entries (a, b)", at most three named, sorted.
func names(list []string, one, many string) string {
	slices.Sort(list)
	shown := list
	if len(shown) > 3 {
		shown = shown[:3]
	}
	s := strings.Join(shown, ", ")
	if len(list) > len(shown) {
		s += fmt.Sprintf(" and %d more", len(list)-len(shown))
	}
	if len(list) == 1 {
		return fmt.Sprintf("1 %s (%s)", one, s)
	}
	return fmt.Sprintf("%d %s (%s)", len(list), many, s)
}
