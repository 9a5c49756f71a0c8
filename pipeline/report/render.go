package report

import (
	"fmt"
	"io"
)

// Formats are the names accepted by -o.
var Formats = []string{"text", "json", "sarif", "github", "markdown"}

// Render writes r in the named format. root is the catalog's path in the repository (for SARIF and
// annotations); version is catalogbot's version (for SARIF).
func Render(w io.Writer, r *Report, format, root, version string, color bool) error {
	switch format {
	case "", "text":
		return WriteText(w, r, TextOptions{Color: color})
	case "json":
		return WriteJSON(w, r)
	case "sarif":
		return WriteSARIF(w, r, version, root)
	case "github":
		if err := WriteGitHub(w, r, root); err != nil {
			return err
		}
		return WriteText(w, r, TextOptions{})
	case "markdown":
		return WriteMarkdown(w, r, 0)
	}
	return fmt.Errorf("unknown output format %q (want one of %v)", format, Formats)
}
