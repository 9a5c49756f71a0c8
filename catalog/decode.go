package catalog

import (
	"fmt"

	"github.com/catalogbot/catalogbot/catalog/internal/scan"
)

// DecodeJSON decodes the JSON value data holds into *out with the loader's scanner: encoding/json's rules
// for the shapes FBC uses (see scan), several times faster, for checks that read property values or the
// manifests inside them. Anything but white space after the value is an error.
func DecodeJSON[T any](data []byte, out *T) error {
	end, err := scan.DecodeInto(data, scan.SkipSpace(data, 0), out)
	if err != nil {
		return err
	}
	if end = scan.SkipSpace(data, end); end != len(data) {
		return fmt.Errorf("unexpected data after the JSON value at offset %d", end)
	}
	return nil
}
