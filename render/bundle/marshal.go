package bundle

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/catalogbot/catalogbot/catalog"
)

// Marshal encodes b exactly as `opm render -o json` prints one blob: four-space indent, no HTML
// escaping, a trailing newline.
func Marshal(b *catalog.Bundle) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "    ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(b); err != nil {
		return nil, fmt.Errorf("encoding bundle %s: %w", b.Name, err)
	}
	return buf.Bytes(), nil
}
