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

// ManifestHeader reads a Kubernetes manifest's apiVersion, kind and metadata.name from its JSON without
// decoding the rest: other values are skipped, not validated (a manifest's CRD schema is most of a
// bundle). Keys match exactly, as Kubernetes reads them, and of duplicate keys the last wins.
func ManifestHeader(data []byte) (apiVersion, kind, name string, err error) {
	i := scan.SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return "", "", "", fmt.Errorf("a manifest must be a JSON object")
	}
	str := func(at int, dst *string) (int, error) {
		if at < len(data) && data[at] == '"' {
			return scan.DecodeInto(data, at, dst)
		}
		*dst = ""
		return scan.FastSkip(data, at)
	}
	_, err = scan.IterObject(data, i, func(ks, ke int, esc bool, at int) (int, error) {
		switch key := scan.StringValue(data, ks, ke, esc); key {
		case "apiVersion":
			return str(at, &apiVersion)
		case "kind":
			return str(at, &kind)
		case "metadata":
			if at >= len(data) || data[at] != '{' {
				return scan.FastSkip(data, at)
			}
			return scan.IterObject(data, at, func(ks, ke int, esc bool, at int) (int, error) {
				if scan.StringValue(data, ks, ke, esc) == "name" {
					return str(at, &name)
				}
				return scan.FastSkip(data, at)
			})
		default:
			return scan.FastSkip(data, at)
		}
	})
	return apiVersion, kind, name, err
}
