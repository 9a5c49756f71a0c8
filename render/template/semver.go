package template

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"

	"github.com/blang/semver/v4"
	"sigs.k8s.io/yaml"

	"github.com/catalogbot/catalogbot/catalog"
)

// StreamType is the kind of generated channel (the type name shows in decoding errors, as opm's).
type StreamType string

const (
	defaultStream StreamType = ""
	minorStream   StreamType = "minor"
	majorStream   StreamType = "major"
)

type bundleEntry struct {
	Image string `json:"image,omitempty"`
}

type channelBundles struct {
	Bundles []bundleEntry `json:"bundles,omitempty"`
}

// SemverTemplateData is an olm.semver template; field names, types and type names are opm's, so that
// strict decoding reports what opm reports.
type SemverTemplateData struct {
	Schema                       string         `json:"schema"`
	GenerateMajorChannels        bool           `json:"generateMajorChannels,omitempty"`
	GenerateMinorChannels        bool           `json:"generateMinorChannels,omitempty"`
	DefaultChannelTypePreference StreamType     `json:"defaultChannelTypePreference,omitempty"`
	Candidate                    channelBundles `json:"candidate,omitempty"`
	Fast                         channelBundles `json:"fast,omitempty"`
	Stable                       channelBundles `json:"stable,omitempty"`
}

// archetype is a channel archetype; its index in archetypes is its stability.
type archetype string

var archetypes = []archetype{"candidate", "fast", "stable"}

func (a archetype) priority() int { return slices.Index(archetypes, a) }

var streamPriority = map[StreamType]int{minorStream: 2, majorStream: 1, defaultStream: 0}

var unknownField = regexp.MustCompile(`unknown field "([^"]+)"`)

// readSemver decodes and checks a semver template as opm's readFile does.
func readSemver(data []byte) (*SemverTemplateData, error) {
	var sv SemverTemplateData
	if err := yaml.UnmarshalStrict(data, &sv); err != nil {
		return nil, err
	}
	if sv.Schema != SchemaSemver {
		return nil, fmt.Errorf("readFile: input file has unknown schema, should be %q", SchemaSemver)
	}
	if !sv.GenerateMajorChannels && !sv.GenerateMinorChannels {
		sv.GenerateMinorChannels = true
	}
	switch sv.DefaultChannelTypePreference {
	case defaultStream:
		if sv.GenerateMinorChannels {
			sv.DefaultChannelTypePreference = minorStream
		} else {
			sv.DefaultChannelTypePreference = majorStream
		}
	case minorStream:
		if !sv.GenerateMinorChannels {
			return nil, errors.New("schema attribute mismatch: DefaultChannelTypePreference set to 'minor' doesn't make sense if not generating minor-version channels")
		}
	case majorStream:
		if !sv.GenerateMajorChannels {
			return nil, errors.New("schema attribute mismatch: DefaultChannelTypePreference set to 'major' doesn't make sense if not generating major-version channels")
		}
	default:
		return nil, fmt.Errorf("unknown DefaultChannelTypePreference: %q\nValid values are 'major' or 'minor'", sv.DefaultChannelTypePreference)
	}
	return &sv, nil
}

// semverKey names a template channel list in lines lookups.
func semverKey(a archetype) string { return string(a) }

func (sv *SemverTemplateData) list(a archetype) []bundleEntry {
	switch a {
	case "candidate":
		return sv.Candidate.Bundles
	case "fast":
		return sv.Fast.Bundles
	}
	return sv.Stable.Bundles
}

// semver renders an olm.semver template: the listed bundles, one package, and channels generated from
// the bundles' versions.
func (t *run) semver(ctx context.Context) (*catalog.Catalog, error) {
	sv, err := readSemver(t.data)
	if err != nil {
		line := t.lines.top("schema")
		if m := unknownField.FindStringSubmatch(err.Error()); m != nil {
			line = t.lines.top(m[1])
		}
		return nil, t.failRender(line, "render: unable to read file: "+err.Error(), nil)
	}
	rendered := map[string]*Bundle{}
	var order []string
	for _, a := range archetypes {
		for i, e := range sv.list(a) {
			if _, ok := rendered[e.Image]; ok {
				continue
			}
			b, err := t.bundle(ctx, e.Image)
			if err != nil {
				return nil, t.failRender(t.lines.itemField(i, "image", semverKey(a), "bundles"), err.Error(), err)
			}
			rendered[e.Image] = b
			order = append(order, e.Image)
		}
	}
	if len(order) == 0 {
		return nil, t.failRender(t.lines.top("schema"), "render: no bundles specified or no bundles could be rendered", nil)
	}
	out := &catalog.Catalog{}
	for _, img := range order {
		out.Bundles = append(out.Bundles, rendered[img].Bundle)
	}

	var pkg string
	versions := map[archetype]map[string]semver.Version{}
	byName := map[string]*Bundle{}
	for _, a := range archetypes {
		entries := map[string]semver.Version{}
		for i, e := range sv.list(a) {
			b := rendered[e.Image]
			line := t.lines.itemField(i, "image", semverKey(a), "bundles")
			fail := func(msg string) error {
				return t.failRender(line, "render: unable to post-process bundle info: "+msg, nil)
			}
			name, version, err := packageOf(b.Bundle)
			if err != nil {
				return nil, fail(err.Error())
			}
			v, err := semver.Parse(version)
			if err != nil {
				return nil, fail(fmt.Sprintf("bundle %q has invalid version %q: %v", b.Name, version, err))
			}
			if pkg == "" {
				pkg = name
				out.Packages = append(out.Packages, &catalog.Package{Schema: catalog.SchemaPackage, Name: name})
			} else if name != pkg {
				return nil, fail(fmt.Sprintf("bundle %q does not belong to this package: %q", name, pkg))
			}
			if _, ok := entries[b.Name]; ok {
				return nil, fail(fmt.Sprintf("duplicate bundle name %q", b.Name))
			}
			entries[b.Name] = v
			byName[b.Name] = b
		}
		if err := buildMetadataConflicts(entries); err != nil {
			return nil, t.failRender(t.lines.top(semverKey(a)), "render: unable to post-process bundle info: "+err.Error(), nil)
		}
		versions[a] = entries
	}

	channels, defaultChannel := sv.generateChannels(pkg, versions, t.opm)
	out.Channels = channels
	out.Packages[0].DefaultChannel = defaultChannel
	if t.opm == OPMv1_46_0 {
		// v1.46.0 leaves the package's description and icon out.
		return out, nil
	}
	if err := populatePackage(out, defaultChannel, byName); err != nil {
		return nil, t.failRender(t.lines.top("schema"), err.Error(), err)
	}
	return out, nil
}

// packageOf reads a rendered bundle's one olm.package property.
func packageOf(b *catalog.Bundle) (name, version string, err error) {
	var found []catalog.Property
	for _, p := range b.Properties {
		if p.Type == catalog.PropertyPackage {
			found = append(found, p)
		}
	}
	if len(found) != 1 {
		return "", "", fmt.Errorf("bundle %q has multiple %q properties, expected exactly 1", b.Name, catalog.PropertyPackage)
	}
	var v struct {
		PackageName string `json:"packageName"`
		Version     string `json:"version"`
	}
	if err := json.Unmarshal(found[0].Value, &v); err != nil {
		return "", "", fmt.Errorf("parse properties for bundle %q: %v", b.Name, err)
	}
	return v.PackageName, v.Version, nil
}

// buildMetadataConflicts refuses versions that differ only by build metadata, which cannot be ordered.
func buildMetadataConflicts(versions map[string]semver.Version) error {
	names := make([]string, 0, len(versions))
	for n := range versions {
		names = append(names, n)
	}
	sort.Strings(names)
	seen := map[string]bool{}
	var msgs []string
	for _, n := range names {
		v := versions[n]
		stripped := v
		stripped.Build = nil
		s := stripped.String()
		if seen[s] {
			msgs = append(msgs, fmt.Sprintf("bundle version %q cannot be compared to %q", v.String(), s))
		}
		seen[s] = true
	}
	if len(msgs) > 0 {
		return fmt.Errorf("encountered bundle versions which differ only by build metadata, which cannot be ordered: %v", aggregate(msgs))
	}
	return nil
}

// highwater is the most stable channel head seen so far: the package's default channel.
type highwater struct {
	arch    archetype
	kind    StreamType
	version semver.Version
	name    string
}

// gt prefers a more stable archetype, then a higher version, then the preferred kind, then minor over major.
func (h highwater) gt(o highwater, pref StreamType) bool {
	if h.arch.priority() != o.arch.priority() {
		return h.arch.priority() > o.arch.priority()
	}
	if h.version.NE(o.version) {
		return h.version.GT(o.version)
	}
	if h.kind != o.kind {
		if h.kind == pref {
			return true
		}
		if o.kind == pref {
			return false
		}
		return streamPriority[h.kind] > streamPriority[o.kind]
	}
	return false
}

// edge is one generated channel entry waiting for its replaces and skips.
type edge struct {
	arch    archetype
	kind    StreamType
	channel string
	name    string
	version semver.Version
	index   int
}

func (sv *SemverTemplateData) generateChannels(pkg string, versions map[archetype]map[string]semver.Version, opm OPMVersion) ([]*catalog.Channel, string) {
	hw := highwater{arch: archetypes[0]}
	channels := map[string]*catalog.Channel{}
	var edges []edge
	for _, a := range archetypes {
		bundles := versions[a]
		names := make([]string, 0, len(bundles))
		for n := range bundles {
			names = append(names, n)
		}
		sort.Slice(names, func(i, j int) bool {
			if c := bundles[names[i]].Compare(bundles[names[j]]); c != 0 {
				return c < 0
			}
			return names[i] < names[j]
		})
		for _, n := range names {
			v := bundles[n]
			var kinds []StreamType
			if sv.GenerateMajorChannels {
				kinds = append(kinds, majorStream)
			}
			if sv.GenerateMinorChannels {
				kinds = append(kinds, minorStream)
			}
			for _, kind := range kinds {
				name := fmt.Sprintf("%s-v%d", a, v.Major)
				if kind == minorStream {
					name = fmt.Sprintf("%s-v%d.%d", a, v.Major, v.Minor)
				}
				ch, ok := channels[name]
				if !ok {
					ch = &catalog.Channel{Schema: catalog.SchemaChannel, Name: name, Package: pkg, Entries: []catalog.ChannelEntry{}}
					channels[name] = ch
					if cand := (highwater{arch: a, kind: kind, version: v, name: name}); cand.gt(hw, sv.DefaultChannelTypePreference) {
						hw = cand
					}
				}
				ch.Entries = append(ch.Entries, catalog.ChannelEntry{Name: n})
				edges = append(edges, edge{arch: a, kind: kind, channel: name, name: n, version: v, index: len(ch.Entries) - 1})
			}
		}
	}
	out := make([]*catalog.Channel, 0, len(channels))
	for _, ch := range channels {
		out = append(out, ch)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	if opm == OPMv1_46_0 {
		all := map[string]semver.Version{}
		for _, a := range archetypes {
			for n, v := range versions[a] {
				all[n] = v
			}
		}
		linkV1_46(out, all)
	} else {
		link(channels, edges)
	}
	return out, hw.name
}

// link sets replaces and skips: within a channel, the head of each minor version skips the lower
// patches of that minor version and replaces the head of the previous minor version.
func link(channels map[string]*catalog.Channel, edges []edge) {
	sort.SliceStable(edges, func(i, j int) bool {
		a, b := edges[i], edges[j]
		if a.arch.priority() != b.arch.priority() {
			return a.arch.priority() < b.arch.priority()
		}
		if streamPriority[a.kind] != streamPriority[b.kind] {
			return streamPriority[a.kind] < streamPriority[b.kind]
		}
		return a.version.LT(b.version)
	})
	setEdge := func(e edge, replaces string, skips map[string]bool) {
		entry := &channels[e.channel].Entries[e.index]
		entry.Replaces = replaces
		var list []string
		for s := range skips {
			if s != replaces {
				list = append(list, s)
			}
		}
		if len(list) > 0 {
			sort.Strings(list)
			entry.Skips = list
		}
	}
	prevZMax := ""
	skips := map[string]bool{}
	for i := 1; i < len(edges); i++ {
		prev, cur := edges[i-1], edges[i]
		crossed := cur.arch != prev.arch || cur.kind != prev.kind || cur.version.Major != prev.version.Major
		yChange := cur.version.Minor != prev.version.Minor
		if crossed || yChange {
			setEdge(prev, prevZMax, skips)
		}
		if crossed {
			skips = map[string]bool{}
			prevZMax = ""
			continue
		}
		if yChange {
			prevZMax = prev.name
		}
		skips[prev.name] = true
	}
	if n := len(edges); n > 1 {
		last, prev := edges[n-1], edges[n-2]
		if last.arch == prev.arch && last.kind == prev.kind && last.version.Major == prev.version.Major {
			setEdge(last, prevZMax, skips)
		}
	}
}

// populatePackage sets the package's description and icon from the ClusterServiceVersion of the default
// channel's head (its last entry), as opm does.
func populatePackage(c *catalog.Catalog, defaultChannel string, byName map[string]*Bundle) error {
	for _, ch := range c.Channels {
		if ch.Name != defaultChannel || len(ch.Entries) == 0 {
			continue
		}
		b := byName[ch.Entries[len(ch.Entries)-1].Name]
		if b == nil {
			return nil
		}
		if !b.HeadKnown {
			return fmt.Errorf("package description and icon: bundle %s (%s): %w: only its olm.csv.metadata form is cached, which has no icon", b.Name, b.Image, ErrNotCached)
		}
		if b.Description != "" {
			c.Packages[0].Description = b.Description
		}
		if b.Icon != nil {
			icon := *b.Icon
			c.Packages[0].Icon = &icon
		}
		return nil
	}
	return nil
}

// headMetadata reads what populatePackage needs from a ClusterServiceVersion (JSON), as opm's
// registry.ClusterServiceVersion GetDescription and GetIcons do: any failure leaves the field out.
func headMetadata(csvJSON []byte) (description string, icon *catalog.Icon) {
	var csv struct {
		Spec json.RawMessage `json:"spec"`
	}
	if err := json.Unmarshal(csvJSON, &csv); err != nil {
		return "", nil
	}
	var spec map[string]*json.RawMessage
	if err := json.Unmarshal(csv.Spec, &spec); err != nil {
		return "", nil
	}
	if raw := spec["description"]; raw != nil {
		var d string
		if json.Unmarshal(*raw, &d) == nil {
			description = d
		}
	}
	if raw := spec["icon"]; raw != nil {
		var icons []struct {
			MediaType  string `json:"mediatype"`
			Base64data []byte `json:"base64data"`
		}
		if json.Unmarshal(*raw, &icons) == nil && len(icons) > 0 {
			icon = &catalog.Icon{Data: icons[0].Base64data, MediaType: icons[0].MediaType}
		}
	}
	return description, icon
}
