package validate

import (
	"fmt"

	"github.com/catalogbot/catalogbot/catalog"
)

func (v *validator) deprecations() {
	for i, d := range v.c.Deprecations {
		add := func(rule, ch, bundle, msg, hint string) { v.add(d.Pos, rule, d.Package, ch, bundle, msg, hint) }
		if d.Package == "" {
			add("deprecation-no-package", "", "", fmt.Sprintf("olm.deprecations blob #%d has no \"package\"", i+1), "set \"package\"")
			continue
		}
		ps := v.pkgs[d.Package]
		if ps == nil {
			add("deprecation-unknown-package", "", "", fmt.Sprintf("deprecations name package %q, which has no olm.package blob", d.Package), "fix \"package\"")
			continue
		}
		if ps.deprecated {
			add("deprecation-two-per-package", "", "", fmt.Sprintf("package %q has more than one olm.deprecations blob", d.Package),
				"merge the entries into one olm.deprecations blob")
			continue
		}
		ps.deprecated = true
		seen := map[catalog.PackageScopedReference]bool{}
		for j, e := range d.Entries {
			ref := e.Reference
			if ref.Schema == "" {
				add("deprecation-missing-ref-schema", "", "", fmt.Sprintf("deprecation entry [%d] of package %q has no reference.schema", j, d.Package),
					"set reference.schema to olm.package, olm.channel or olm.bundle")
				continue
			}
			if seen[ref] {
				add("deprecation-duplicate-entry", "", "", fmt.Sprintf("deprecation entry [%d] of package %q repeats reference {schema: %s, name: %q}", j, d.Package, ref.Schema, ref.Name),
					"keep one entry per deprecated object")
				continue
			}
			seen[ref] = true
			switch ref.Schema {
			case catalog.SchemaBundle:
				if ps.bundles[ref.Name] == nil {
					add("deprecation-bundle-not-found", "", ref.Name, fmt.Sprintf("deprecation entry [%d] deprecates bundle %q, which package %q does not have", j, ref.Name, d.Package),
						"fix the bundle name")
					continue
				}
			case catalog.SchemaChannel:
				if ps.channels[ref.Name] == nil && ref.Name != ps.p.DefaultChannel {
					add("deprecation-channel-not-found", ref.Name, "", fmt.Sprintf("deprecation entry [%d] deprecates channel %q, which package %q does not have; channels are: %s", j, ref.Name, d.Package, names(ps.channels)),
						"fix the channel name")
					continue
				}
			case catalog.SchemaPackage:
				if ref.Name != "" {
					add("deprecation-package-name-set", "", "", fmt.Sprintf("deprecation entry [%d] deprecates the package but names %q; a package reference has no name", j, ref.Name),
						"remove reference.name")
					continue
				}
			default:
				add("deprecation-unknown-ref-schema", "", "", fmt.Sprintf("deprecation entry [%d] of package %q references schema %q; only olm.package, olm.channel and olm.bundle can be deprecated", j, d.Package, ref.Schema),
					"fix reference.schema")
				continue
			}
			if e.Message == "" {
				add("deprecation-empty-message", "", "", fmt.Sprintf("deprecation entry [%d] of package %q (%s %q) has no message", j, d.Package, ref.Schema, ref.Name),
					"say why it is deprecated and what to use instead")
			}
		}
	}
}
