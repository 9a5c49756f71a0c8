package bundle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/catalogbot/catalogbot/diag"
)

var errNoObject = errors.New("the first document is empty")

// manifest is one object of manifests/, its JSON (encoded once: the olm.bundle.object bytes, and what
// the CSV and CRD decoders read) and the file it came from.
type manifest struct {
	file string
	obj  *object
	json []byte
}

// loadManifests decodes the first document of every file of manifests/ in name order, skipping
// directories and dot files, as opm does. opm also silently skips files it cannot decode and every CSV
// after the first; here a .yaml/.yml/.json file that is not a Kubernetes object, and a second CSV, are
// errors. Other undecodable files (README.md, ...) are skipped with a warning.
func (o Options) loadManifests(ctx context.Context, r *reader) ([]manifest, *manifest, error) {
	entries, err := r.dir(ctx, "manifests")
	if err != nil {
		return nil, nil, err
	}
	var (
		objects []manifest
		csvAt   = -1
	)
	for _, e := range entries {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		file := "manifests/" + e.Name()
		data, err := r.read(ctx, file)
		if errors.Is(err, errIsDir) {
			o.warn("%s: links to a directory; skipped, as opm does", file)
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		obj, more, err := decodeObject(data)
		if err == nil && obj.Object == nil {
			err = errNoObject // an empty first document decodes to nothing; opm drops the file
		}
		if err != nil {
			if err := o.undecodable(file, data, err); err != nil {
				return nil, nil, err
			}
			continue
		}
		if more {
			o.warn("%s: holds more than one YAML document; only the first is part of the bundle, as in opm", file)
		}
		if obj.kind() == kindCSV {
			if csvAt >= 0 {
				return nil, nil, diag.InvalidError(fmt.Errorf("%s: a second ClusterServiceVersion (the first is in %s); a bundle has exactly one", file, objects[csvAt].file))
			}
			csvAt = len(objects)
		}
		js, err := json.Marshal(obj.Object)
		if err != nil {
			return nil, nil, diag.InvalidError(fmt.Errorf("%s: encoding object: %w", file, err))
		}
		objects = append(objects, manifest{file: file, obj: obj, json: js})
	}
	if len(objects) == 0 {
		return nil, nil, diag.InvalidError(errors.New("manifests/: no Kubernetes objects found"))
	}
	if csvAt < 0 {
		return nil, nil, diag.InvalidError(fmt.Errorf("manifests/: no ClusterServiceVersion among the %d objects found", len(objects)))
	}
	return objects, &objects[csvAt], nil
}

// undecodable decides what to do with a manifest opm would skip: nil (skip, with a warning) or an error.
func (o Options) undecodable(file string, data []byte, decodeErr error) error {
	strict := hasDataExt(file)
	first, later, syntaxErr := firstDocument(data)
	switch {
	case syntaxErr != nil && strict:
		return diag.InvalidError(fmt.Errorf("%s: %w", file, syntaxErr))
	case syntaxErr != nil:
		o.warn("%s: not YAML or JSON (%v); skipped, as opm does", file, syntaxErr)
	case first == nil && later && strict:
		return diag.InvalidError(fmt.Errorf("%s: the first YAML document is empty, so opm ignores the whole file; remove the empty document", file))
	case first == nil:
		o.warn("%s: empty; skipped", file)
	case strict:
		return diag.InvalidError(fmt.Errorf("%s: not a Kubernetes object: %s", file, notObjectReason(first, decodeErr)))
	default:
		o.warn("%s: not a Kubernetes object; skipped, as opm does", file)
	}
	return nil
}

func notObjectReason(doc any, decodeErr error) string {
	m, ok := doc.(map[string]any)
	if !ok {
		return fmt.Sprintf("the document is a %s, not a mapping", jsonKind(doc))
	}
	if k, _ := m["kind"].(string); k == "" {
		return "it has no kind"
	}
	return decodeErr.Error()
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "list"
	case string:
		return "string"
	case bool:
		return "boolean"
	case nil:
		return "null"
	default:
		return "number"
	}
}
