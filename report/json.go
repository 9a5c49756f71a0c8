package report

import (
	"encoding/json"
	"io"
	"maps"
	"slices"
)

// WriteJSON renders the report as one JSON document (stable field order, diagnostics sorted).
func WriteJSON(w io.Writer, r *Report) error {
	out := struct {
		*Report
		Verdict Status `json:"verdict"`
	}{r, r.Verdict()}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

func sortedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}
