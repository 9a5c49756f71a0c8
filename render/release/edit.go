package release

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Bundle is what a release adds: the bundle's package, its ClusterServiceVersion's name and the image
// reference templates name it by.
type Bundle struct {
	Package, Name, Image string
}

// EditBasic returns the basic template data with b released as t says: each channel t names that the
// template lacks is added after the last entry (as upstream adds it, with the bundle's entry), the
// olm.bundle image after them, and b's channel entry (name, replaces, skips, skipRange) after the last
// entry of each channel it already has. No line of data changes.
func EditBasic(data []byte, t Target, b Bundle) ([]byte, error) {
	doc, root, err := parse(data)
	if err != nil {
		return nil, err
	}
	_, entries := field(root, "entries")
	if entries == nil {
		return nil, fmt.Errorf("the basic template has no entries")
	}
	top, err := dashColumn(data, entries, "entries")
	if err != nil {
		return nil, err
	}
	channels := map[string]*yaml.Node{}
	hasImage := false
	for _, e := range entries.Content {
		_, schema := field(e, "schema")
		if schema == nil {
			continue
		}
		switch schema.Value {
		case "olm.channel":
			if _, name := field(e, "name"); name != nil {
				channels[name.Value] = e
			}
		case "olm.bundle":
			if _, img := field(e, "image"); img != nil && img.Value == b.Image {
				hasImage = true
			}
		}
	}
	var ins []insertion
	end := after(data, doc, entries)
	newW := func() *text { return newText(data) }
	for _, ch := range t.Channels {
		e := channels[ch]
		if e == nil {
			w := newW()
			channel(w, top, ch, t, b)
			ins = append(ins, insertion{end, w.Bytes()})
			continue
		}
		_, list := field(e, "entries")
		if list == nil {
			return nil, fmt.Errorf("line %d: channel %q has no entries list; edit it by hand", e.Line, ch)
		}
		col, err := dashColumn(data, list, fmt.Sprintf("channel %q's entries", ch))
		if err != nil {
			return nil, err
		}
		w := newW()
		entry(w, col, t, b)
		ins = append(ins, insertion{after(data, doc, list), w.Bytes()})
	}
	if !hasImage {
		w := newW()
		w.pair(top, true, "schema", "olm.bundle")
		w.pair(top+2, false, "image", b.Image)
		ins = append(ins, insertion{end, w.Bytes()})
	}
	out, err := check(data, splice(data, ins))
	if err != nil {
		return nil, err
	}
	if err := verifyBasic(data, out, t, b, !hasImage); err != nil {
		return nil, fmt.Errorf("the edit does not read back as the release (%v); edit the template by hand", err)
	}
	return out, nil
}

// channel writes a channel item at column col holding b's entry, as upstream adds a channel.
func channel(w *text, col int, name string, t Target, b Bundle) {
	w.pair(col, true, "schema", "olm.channel")
	w.pair(col+2, false, "name", name)
	w.pair(col+2, false, "package", b.Package)
	w.key(col+2, false, "entries")
	entry(w, col+2, t, b)
}

// entry writes b's channel entry as an item at column col.
func entry(w *text, col int, t Target, b Bundle) {
	w.pair(col, true, "name", b.Name)
	if t.Replaces != "" {
		w.pair(col+2, false, "replaces", t.Replaces)
	}
	if len(t.Skips) > 0 {
		w.key(col+2, false, "skips")
		for _, s := range t.Skips {
			w.WriteString(fmt.Sprintf("%*s- %s\n", col+2, "", scalar(s)))
		}
	}
	if t.SkipRange != "" {
		w.pair(col+2, false, "skipRange", t.SkipRange)
	}
}

// EditSemver returns the semver template data with b's image added at the end of the Bundles list of
// each channel t names (Candidate, Fast, Stable), a channel the template lacks added at its end. No line
// of data changes.
func EditSemver(data []byte, t Target, b Bundle) ([]byte, error) {
	doc, root, err := parse(data)
	if err != nil {
		return nil, err
	}
	var ins []insertion
	for _, ch := range t.Channels {
		_, c := field(root, ch)
		if c == nil {
			w := newText(data)
			semverChannel(w, ch, b)
			ins = append(ins, insertion{after(data, doc, root), w.Bytes()})
			continue
		}
		_, list := field(c, "Bundles")
		if list == nil {
			return nil, fmt.Errorf("line %d: %s has no Bundles list; edit it by hand", c.Line, ch)
		}
		col, err := dashColumn(data, list, ch+".Bundles")
		if err != nil {
			return nil, err
		}
		w := newText(data)
		w.pair(col, true, "Image", b.Image)
		ins = append(ins, insertion{after(data, doc, list), w.Bytes()})
	}
	out, err := check(data, splice(data, ins))
	if err != nil {
		return nil, err
	}
	if err := verifySemver(data, out, t, b); err != nil {
		return nil, fmt.Errorf("the edit does not read back as the release (%v); edit the template by hand", err)
	}
	return out, nil
}

// parse reads a template into its document and top mapping.
func parse(data []byte) (*yaml.Node, *yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, nil, err
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("not a mapping")
	}
	return &doc, doc.Content[0], nil
}

// check makes sure the edit kept every line of data, in order, and still parses.
func check(data, out []byte) ([]byte, error) {
	var v any
	if err := yaml.Unmarshal(out, &v); err != nil {
		return nil, fmt.Errorf("the edited template does not parse (%v); edit it by hand", err)
	}
	if !keepsLines(data, out) {
		return nil, fmt.Errorf("the edit would change lines of the template; edit it by hand")
	}
	return out, nil
}

// semverChannel writes a semver template's channel holding b's image.
func semverChannel(w *text, ch string, b Bundle) {
	w.key(0, false, ch)
	w.key(2, false, "Bundles")
	w.pair(2, true, "Image", b.Image)
}

// CreateBasic is a new basic template releasing b as t says, as upstream creates one: the package (its
// default channel t's first), a channel per t's channel holding b's entry, then b's image.
func CreateBasic(t Target, b Bundle) []byte {
	w := &text{wrap: true}
	w.WriteString("---\n")
	w.pair(0, false, "schema", "olm.template.basic")
	w.key(0, false, "entries")
	w.pair(0, true, "schema", "olm.package")
	w.pair(2, false, "name", b.Package)
	w.pair(2, false, "defaultChannel", t.Channels[0])
	for _, ch := range t.Channels {
		channel(w, 0, ch, t, b)
	}
	w.pair(0, true, "schema", "olm.bundle")
	w.pair(2, false, "image", b.Image)
	return w.Bytes()
}

// CreateSemver is a new semver template releasing b into t's channels, as upstream creates one (major
// and minor channels generated).
func CreateSemver(t Target, b Bundle) []byte {
	w := &text{wrap: true}
	w.WriteString("---\n")
	w.pair(0, false, "Schema", "olm.semver")
	w.WriteString("GenerateMajorChannels: true\nGenerateMinorChannels: true\n")
	for _, ch := range t.Channels {
		semverChannel(w, ch, b)
	}
	return w.Bytes()
}
