package template

import (
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/catalogbot/catalogbot/catalog"
)

// OPMVersion is the opm release whose template rendering Render reproduces. Repositories pin one
// (community-operators-prod renders with v1.46.0), and their committed catalogs are that opm's output:
// rendering them with another opm's rules makes the drift gate fail on packages nobody touched.
type OPMVersion string

// The opm releases Render reproduces, each held byte for byte to the real opm by the differential tests.
const (
	OPMv1_46_0 OPMVersion = "v1.46.0"
	OPMv1_73_0 OPMVersion = "v1.73.0"
	// DefaultOPMVersion is used when a repository pins none.
	DefaultOPMVersion = OPMv1_73_0
)

// OPMVersions lists the supported releases, oldest first.
var OPMVersions = []OPMVersion{OPMv1_46_0, OPMv1_73_0}

// OPMVersionsText is the supported releases for help and error messages ("v1.46.0, v1.73.0").
func OPMVersionsText() string {
	s := make([]string, len(OPMVersions))
	for i, v := range OPMVersions {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}

// ParseOPMVersion reads an opm release as written in configuration or on the command line ("v1.46.0" or
// "1.46.0"; "" is the default), refusing one whose rendering catalogbot does not reproduce.
func ParseOPMVersion(s string) (OPMVersion, error) {
	if s == "" {
		return DefaultOPMVersion, nil
	}
	v := OPMVersion("v" + strings.TrimPrefix(s, "v"))
	for _, known := range OPMVersions {
		if v == known {
			return v, nil
		}
	}
	return "", fmt.Errorf("opm version %q is not one whose rendering catalogbot reproduces (%s)", s, OPMVersionsText())
}

// linkV1_46 sets replaces and skips as opm v1.46.0's semver template does, one channel at a time: the
// entries in version order, the head of each minor version skips the lower patches of that minor version
// and, from the second minor version on, both replaces and skips the previous minor version's head; the
// last entry of a channel also replaces the one before it when their minor numbers differ. Unlike
// v1.73.0, no edge crosses channels, and a minor head's skips list its replaces target too.
func linkV1_46(channels []*catalog.Channel, versions map[string]semver.Version) {
	for _, ch := range channels {
		e := ch.Entries
		sort.SliceStable(e, func(i, j int) bool { return versions[e[i].Name].LT(versions[e[j].Name]) })
		minor := func(i int) semver.Version {
			v := versions[e[i].Name]
			return semver.Version{Major: v.Major, Minor: v.Minor}
		}
		cur, probe, prevHead := 0, 0, ""
		for cur < len(e) {
			for probe < len(e) && minor(probe).EQ(minor(cur)) {
				probe++
			}
			head := probe - 1
			if cur != probe {
				if prevHead != "" {
					e[head].Skips = append(e[head].Skips, prevHead)
					e[head].Replaces = prevHead
				}
				prevHead = e[head].Name
			}
			for ; cur < head; cur++ {
				e[head].Skips = append(e[head].Skips, e[cur].Name)
			}
			cur++
			probe = cur + 1
		}
		if n := len(e); n > 1 && versions[e[n-1].Name].Minor != versions[e[n-2].Name].Minor {
			e[n-1].Replaces = e[n-2].Name
		}
	}
}
