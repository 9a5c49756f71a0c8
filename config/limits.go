package config

// LimitsConfig bounds what validating a catalog of this repository may cost, against hostile pull
// requests: bytes per catalog file, bytes of a whole catalog, diagnostics kept per rule. Zero means
// catalogbot's default (256 MiB, 1 GiB, 100); command-line flags override these.
type LimitsConfig struct {
	MaxFileBytes          int `yaml:"maxFileBytes"`
	MaxTotalBytes         int `yaml:"maxTotalBytes"`
	MaxDiagnosticsPerRule int `yaml:"maxDiagnosticsPerRule"`
}

func (d *decoder) limits(l LimitsConfig) {
	for _, f := range []struct {
		path string
		v    int
	}{
		{"limits.maxFileBytes", l.MaxFileBytes},
		{"limits.maxTotalBytes", l.MaxTotalBytes},
		{"limits.maxDiagnosticsPerRule", l.MaxDiagnosticsPerRule},
	} {
		if f.v < 0 {
			d.errorAt(f.path, "config-bad-value", "leave it out (or 0) for the default", "%s: %d is negative", f.path, f.v)
		}
	}
}
