package report

import (
	"crypto/rand"
	"encoding/hex"
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
		return WriteTextNoCommands(w, r)
	case "markdown":
		return WriteMarkdown(w, r, 0)
	}
	return fmt.Errorf("unknown output format %q (want one of %v)", format, Formats)
}

// WriteTextNoCommands writes the text report so that the Actions runner reads none of it as a workflow
// command: catalog content (a bundle image, a message) could otherwise smuggle "::warning::..." lines in.
func WriteTextNoCommands(w io.Writer, r *Report) error {
	var buf [16]byte
	if _, err := rand.Read(buf[:]); err != nil {
		return err
	}
	token := "catalogbot-" + hex.EncodeToString(buf[:])
	if _, err := fmt.Fprintf(w, "::stop-commands::%s\n", token); err != nil {
		return err
	}
	if err := WriteText(w, r, TextOptions{}); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "::%s::\n", token)
	return err
}
