package template

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing/fstest"

	k8syaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/checks/validate"
	"github.com/catalogbot/catalogbot/diag"
)

// Substitute replaces the bundle named Base by the bundle image Name in every channel.
type Substitute struct {
	Name string `json:"name"`
	Base string `json:"base"`
}

// SubstitutesTemplateData is an olm.template.substitutes template (the type name shows in decoding errors,
// as opm's).
type SubstitutesTemplateData struct {
	Schema        string       `json:"schema"`
	Entries       []*meta      `json:"entries"`
	Substitutions []Substitute `json:"substitutions"`
}

// substitutes renders an olm.template.substitutes template: its entries as they are (bundles included,
// not rendered), then each substitution in order grafts the substitute bundle into every channel in place
// of its base.
func (t *run) substitutes(ctx context.Context) (*catalog.Catalog, error) {
	fail := func(line int, msg string, cause error) error { return t.failRender(line, "render: "+msg, cause) }
	var raw json.RawMessage
	if err := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(t.data), 4096).Decode(&raw); err != nil {
		return nil, fail(t.lines.top("schema"), "unable to parse template: decoding template schema: "+err.Error(), nil)
	}
	var st SubstitutesTemplateData
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, fail(t.lines.top("entries"), "unable to parse template: unmarshalling template: "+jsonMessage(err), nil)
	}
	if st.Schema != SchemaSubstitutes {
		return nil, fail(t.lines.top("schema"), fmt.Sprintf("unable to parse template: template has unknown schema (%q), should be %q", st.Schema, SchemaSubstitutes), nil)
	}
	out := &catalog.Catalog{}
	for i, m := range st.Entries {
		line := t.lines.item(i, "entries")
		if m == nil {
			return nil, fail(line, "unable to create declarative config from entries: entry is null", nil)
		}
		if _, err := addEntry(out, m); err != nil {
			return nil, fail(line, "unable to create declarative config from entries: "+err.Error(), nil)
		}
	}
	if msg, err := fbcProblem(ctx, out); err != nil {
		return nil, fmt.Errorf("%s: %w", t.file, err)
	} else if msg != "" {
		return nil, fail(t.lines.top("entries"), "entries are not valid FBC: "+msg, nil)
	}
	seenBases := map[string]bool{}
	seenNames := map[string]string{}
	for i, s := range st.Substitutions {
		if seenBases[s.Base] {
			return nil, fail(t.lines.itemField(i, "base", "substitutions"), fmt.Sprintf("cannot reuse the same substitution base %q", s.Base), nil)
		}
		seenBases[s.Base] = true
		if base, ok := seenNames[s.Name]; ok {
			return nil, fail(t.lines.itemField(i, "name", "substitutions"), fmt.Sprintf("cannot reuse the same substitution %q for different bases (%q and %q)", s.Name, base, s.Base), nil)
		}
		seenNames[s.Name] = s.Base
		if err := t.substitute(ctx, out, s, i); err != nil {
			e, ok := err.(*substError)
			if !ok {
				return nil, fmt.Errorf("%s: %w", t.file, err)
			}
			return nil, fail(e.line, fmt.Sprintf("error processing substitution %q -> %q: %v", s.Base, s.Name, e.err), e.err)
		}
	}
	return out, nil
}

// substError is a substitution error about a given template line.
type substError struct {
	line int
	err  error
}

func (e *substError) Error() string { return e.err.Error() }
func (e *substError) Unwrap() error { return e.err }

// substitute checks substitution s (the i-th) and applies it to c, as opm's processSubstitution does.
func (t *run) substitute(ctx context.Context, c *catalog.Catalog, s Substitute, i int) error {
	at := func(key string, err error) error {
		return &substError{line: t.lines.itemField(i, key, "substitutions"), err: err}
	}
	switch {
	case s.Name == "":
		return at("name", fmt.Errorf("substitution name cannot be empty"))
	case s.Base == "":
		return at("base", fmt.Errorf("substitution base cannot be empty"))
	case s.Name == s.Base:
		return at("name", fmt.Errorf("substitution name and base cannot be the same"))
	}
	sub, err := t.bundle(ctx, s.Name)
	if err != nil {
		return at("name", fmt.Errorf("failed to render bundle image reference %q: %w", s.Name, err))
	}
	subVR, err := versionRelease(sub.Bundle, true)
	if err != nil {
		return at("name", fmt.Errorf("failed to get VersionRelease for substitute bundle %q: %w", s.Name, err))
	}
	var base *catalog.Bundle
	for _, b := range c.Bundles {
		if b.Name == s.Base {
			base = b
			break
		}
	}
	if base == nil {
		return at("base", fmt.Errorf("base bundle %q does not exist in catalog", s.Base))
	}
	baseVR, err := versionRelease(base, false)
	if err != nil {
		return at("base", fmt.Errorf("failed to get VersionRelease for base bundle %q: %w", s.Base, err))
	}
	if baseVR.compare(subVR) >= 0 {
		return at("name", fmt.Errorf("base bundle %q is not less than substitute bundle %q", s.Base, s.Name))
	}
	for _, ch := range c.Channels {
		graft(ch, s.Base, sub.Name)
	}
	c.Bundles = append(c.Bundles, sub.Bundle)
	if msg, err := fbcProblem(ctx, c); err != nil {
		return err
	} else if msg != "" {
		return at("name", fmt.Errorf("resulting config is not valid FBC: %s", msg))
	}
	return nil
}

// graft puts bundle sub in place of base in channel ch: each entry named base gets a sibling entry named
// sub that takes over its upgrade edges and skips base; entries replacing or skipping base now replace or
// skip sub instead (a replaced base becomes a skipped one).
func graft(ch *catalog.Channel, base, sub string) {
	var bases []int
	for j, e := range ch.Entries {
		if e.Name == base {
			bases = append(bases, j)
		}
	}
	for k := len(bases) - 1; k >= 0; k-- {
		e := &ch.Entries[bases[k]]
		skips := append(slices.Clip(e.Skips), base)
		ch.Entries = append(ch.Entries, catalog.ChannelEntry{Name: sub, Replaces: e.Replaces, Skips: skips, SkipRange: e.SkipRange})
		e = &ch.Entries[bases[k]]
		e.Replaces, e.Skips, e.SkipRange = "", nil, ""
	}
	for j := range len(ch.Entries) - len(bases) {
		e := &ch.Entries[j]
		if e.Replaces == base {
			e.Replaces = sub
			e.Skips = append(slices.Clip(e.Skips), base)
		} else if slices.Contains(e.Skips, base) {
			e.Skips = slices.DeleteFunc(append(slices.Clip(e.Skips), sub), func(s string) bool { return s == base })
		}
	}
}

// fbcProblem validates c as a file-based catalog with catalogbot's validator (the rules opm's
// ConvertToModel enforces), returning "" when c is valid, else opm's message when conversionProblem
// finds it, else the validator's first error.
func fbcProblem(ctx context.Context, c *catalog.Catalog) (string, error) {
	var buf bytes.Buffer
	if err := catalog.WriteJSON(&buf, c); err != nil {
		return "", fmt.Errorf("writing the catalog to validate it: %w", err)
	}
	res, err := catalog.LoadFS(ctx, fstest.MapFS{"catalog.json": {Data: buf.Bytes()}}, catalog.LoadOptions{})
	if err != nil {
		return "", fmt.Errorf("loading the catalog to validate it: %w", err)
	}
	ds := res.Diagnostics
	if !diag.HasErrors(ds) {
		ds = validate.Catalog(res.Catalog)
	}
	for _, d := range ds {
		if d.Severity == diag.Error {
			if msg, unknown := conversionProblem(c); msg != "" && !unknown {
				return msg, nil
			}
			return d.Message, nil
		}
	}
	return "", nil
}
