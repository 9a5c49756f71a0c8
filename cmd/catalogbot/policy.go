package main

import (
	"fmt"
	"slices"

	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
)

// policyPresets checks --policy's presets: they add to the configuration's, never take from it.
func policyPresets(presets []string) error {
	for _, p := range presets {
		if !slices.Contains(config.PolicyPresets, p) {
			return diag.UsageError(fmt.Errorf("--policy %q: not a preset (community, olmv1 or none)", p))
		}
	}
	return nil
}

// policyFlags are validate's policy flags: --policy's presets and --since's revision.
type policyFlags struct {
	presets []string
	since   string
}
