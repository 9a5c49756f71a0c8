package config

import (
	"fmt"
	"strings"
)

// smokeOLM checks smoke.olm and smoke.olmByCatalog: known OLM choices; entries only with catalogs:,
// each with catalogs named as in smoke.clusterVersions; a catalog named by two entries is a warning (the
// first wins).
func (d *decoder) smokeOLM(c *Config) {
	const hint = "v0 (CatalogSource and Subscription), v1 (ClusterCatalog and ClusterExtension) or both"
	if _, set := d.pos["smoke.olm"]; set && !d.failed["smoke.olm"] && !isSmokeOLM(c.Smoke.OLM) {
		d.errorAt("smoke.olm", "config-bad-value", hint, "smoke.olm: %q is not one of %s", c.Smoke.OLM, strings.Join(SmokeOLMs, ", "))
	}
	const p = "smoke.olmByCatalog"
	if _, set := d.pos[p]; !set || d.failed[p] {
		return
	}
	if !c.MultiCatalog() {
		d.errorAt(p, "config-bad-value", "it chooses the OLM of catalogs of catalogs.pattern or catalogs.list; use smoke.olm for the only catalog", "%s: set without catalogs", p)
		return
	}
	seen := map[string]string{}
	for i, e := range c.Smoke.OLMByCatalog {
		ep := fmt.Sprintf("%s[%d]", p, i)
		if d.failed[ep] {
			continue
		}
		if _, set := d.pos[ep+".olm"]; !set {
			d.errorAt(ep, "config-missing-field", "add olm: v0, v1 or both", "%s: no olm", ep)
		} else if !d.failed[ep+".olm"] && !isSmokeOLM(e.OLM) {
			d.errorAt(ep+".olm", "config-bad-value", hint, "%s.olm: %q is not one of %s", ep, e.OLM, strings.Join(SmokeOLMs, ", "))
		}
		if len(e.ClusterVersions) == 0 {
			if !d.failed[ep+".clusterVersions"] {
				d.errorAt(ep, "config-missing-field", "list the catalogs it is for, such as clusterVersions: [v4.18, v4.19]", "%s: no clusterVersions: it would choose for no catalog", ep)
			}
			continue
		}
		for j, v := range e.ClusterVersions {
			vp := fmt.Sprintf("%s.clusterVersions[%d]", ep, j)
			if d.failed[vp] {
				continue
			}
			k := strings.TrimPrefix(v, "v")
			switch {
			case !catalogNameRE().MatchString(v):
				d.errorAt(vp, "config-bad-value", "a catalog name or cluster version such as v4.18", "%s.clusterVersions: %q is not a catalog name", ep, v)
			case seen[k] != "":
				d.warnAt(vp, "config-duplicate-entry", "the first entry naming a catalog chooses its OLM", "%s.clusterVersions: %q is already named by %s", ep, v, seen[k])
			default:
				seen[k] = ep
			}
		}
	}
}

func isSmokeOLM(s string) bool {
	for _, o := range SmokeOLMs {
		if s == o {
			return true
		}
	}
	return false
}
