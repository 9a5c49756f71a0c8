package release

import (
	"fmt"
	"reflect"

	"go.yaml.in/yaml/v3"
)

// The edits are read back: whatever the names in a release-config.yaml, the template must say exactly what
// the release adds, no more (a value that would write structure is refused, not written).

// basicTemplate is the part of a basic template a release changes.
type basicTemplate struct {
	Entries []map[string]any `yaml:"entries"`
}

// verifyBasic checks that out is before with b's channel entry last in each channel t names, the missing
// channels and the image (when added) appended, and nothing else added.
func verifyBasic(before, out []byte, t Target, b Bundle, addedImage bool) error {
	var old, now basicTemplate
	if err := yaml.Unmarshal(before, &old); err != nil {
		return err
	}
	if err := yaml.Unmarshal(out, &now); err != nil {
		return err
	}
	want := map[string]any{"name": b.Name}
	if t.Replaces != "" {
		want["replaces"] = t.Replaces
	}
	if len(t.Skips) > 0 {
		skips := make([]any, len(t.Skips))
		for i, s := range t.Skips {
			skips[i] = s
		}
		want["skips"] = skips
	}
	if t.SkipRange != "" {
		want["skipRange"] = t.SkipRange
	}
	added := 0
	if addedImage {
		added = 1
	}
	byName := map[string]map[string]any{}
	for _, e := range now.Entries {
		if e["schema"] == "olm.channel" {
			if n, ok := e["name"].(string); ok {
				byName[n] = e
			}
		}
	}
	for _, ch := range t.Channels {
		e := byName[ch]
		list, _ := e["entries"].([]any)
		if len(list) == 0 || !reflect.DeepEqual(list[len(list)-1], want) {
			return fmt.Errorf("channel %q does not end with the bundle's entry as written", ch)
		}
	}
	for _, e := range old.Entries {
		if n, ok := e["name"].(string); ok && e["schema"] == "olm.channel" {
			delete(byName, n)
		}
	}
	added += len(byName)
	if len(now.Entries) != len(old.Entries)+added {
		return fmt.Errorf("the template has %d entries, want %d", len(now.Entries), len(old.Entries)+added)
	}
	if addedImage {
		last := now.Entries[len(now.Entries)-1]
		if !reflect.DeepEqual(last, map[string]any{"schema": "olm.bundle", "image": b.Image}) {
			return fmt.Errorf("the last entry is not the bundle's image as written")
		}
	}
	return nil
}

// verifySemver checks that each channel t names ends with b's image in out, and that no other channel
// changed.
func verifySemver(before, out []byte, t Target, b Bundle) error {
	var old, now map[string]any
	if err := yaml.Unmarshal(before, &old); err != nil {
		return err
	}
	if err := yaml.Unmarshal(out, &now); err != nil {
		return err
	}
	if len(now) != len(old)+countMissing(old, t.Channels) {
		return fmt.Errorf("the template has %d keys, want %d", len(now), len(old)+countMissing(old, t.Channels))
	}
	for _, ch := range t.Channels {
		c, _ := now[ch].(map[string]any)
		list, _ := c["Bundles"].([]any)
		if len(list) == 0 || !reflect.DeepEqual(list[len(list)-1], map[string]any{"Image": b.Image}) {
			return fmt.Errorf("%s does not end with the bundle's image as written", ch)
		}
	}
	return nil
}

func countMissing(m map[string]any, keys []string) int {
	n := 0
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			n++
		}
	}
	return n
}
