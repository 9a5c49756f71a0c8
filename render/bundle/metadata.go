package bundle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/catalogbot/catalogbot/diag"
)

// Annotation keys of metadata/annotations.yaml.
const (
	AnnotationPackage        = "operators.operatorframework.io.bundle.package.v1"
	AnnotationChannels       = "operators.operatorframework.io.bundle.channels.v1"
	AnnotationDefaultChannel = "operators.operatorframework.io.bundle.channel.default.v1"
)

// The three metadata file shapes. opm decodes every file of metadata/ as each of them and takes, for
// each, the first file (in name order) that decodes and is not empty, whatever its name.
type annotationsFile struct {
	Annotations struct {
		PackageName        string `json:"operators.operatorframework.io.bundle.package.v1"`
		Channels           string `json:"operators.operatorframework.io.bundle.channels.v1"`
		DefaultChannelName string `json:"operators.operatorframework.io.bundle.channel.default.v1"`
	} `json:"annotations"`
}

type filedProperty struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

type dependenciesFile struct {
	Dependencies []filedProperty `json:"dependencies"`
}

type propertiesFile struct {
	Properties []filedProperty `json:"properties"`
}

// metadata is what metadata/ contributes to a bundle.
type metadata struct {
	annotationsFile string
	packageName     string
	dependencies    []sourcedProperty
	properties      []sourcedProperty
}

// loadMetadata reads metadata/ as opm does. Beyond opm, a .yaml/.yml/.json file that does not parse is an
// error, and so is a missing or empty package annotation.
func (o Options) loadMetadata(ctx context.Context, r *reader) (*metadata, error) {
	entries, err := r.dir(ctx, "metadata")
	if err != nil {
		return nil, err
	}
	var (
		md        metadata
		foundAnn  bool
		annErrs   []error
		foundDeps bool
		foundProp bool
	)
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		file := "metadata/" + e.Name()
		data, err := r.read(ctx, file)
		if errors.Is(err, errIsDir) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if hasDataExt(file) {
			if _, _, err := firstDocument(data); err != nil {
				return nil, diag.InvalidError(fmt.Errorf("%s: %w", file, err))
			}
		}
		if !foundAnn {
			var af annotationsFile
			err := decodeFirst(data, &af)
			switch {
			case err == nil && af != (annotationsFile{}):
				foundAnn = true
				md.annotationsFile = file
				md.packageName = af.Annotations.PackageName
			case err != nil && hasDataExt(file):
				annErrs = append(annErrs, fmt.Errorf("%s: %w", file, err))
			}
		}
		if !foundDeps {
			var df dependenciesFile
			if decodeFirst(data, &df) == nil && len(df.Dependencies) > 0 {
				foundDeps = true
				md.dependencies = sourced(file, "dependencies", df.Dependencies)
			}
		}
		if !foundProp {
			var pf propertiesFile
			if decodeFirst(data, &pf) == nil && len(pf.Properties) > 0 {
				foundProp = true
				md.properties = sourced(file, "properties", pf.Properties)
			}
		}
	}
	if !foundAnn {
		return nil, diag.InvalidError(fmt.Errorf("metadata/: no annotations file: expected metadata/annotations.yaml with an annotations map holding %s and %s%s",
			AnnotationPackage, AnnotationChannels, joinCauses(annErrs)))
	}
	if md.packageName == "" {
		return nil, diag.InvalidError(fmt.Errorf("%s: annotation %s is missing or empty (opm would render a bundle without a package)", md.annotationsFile, AnnotationPackage))
	}
	return &md, nil
}

func sourced(file, list string, props []filedProperty) []sourcedProperty {
	out := make([]sourcedProperty, len(props))
	for i, p := range props {
		out[i] = sourcedProperty{Type: p.Type, Value: p.Value, src: fmt.Sprintf("%s: %s[%d]", file, list, i)}
	}
	return out
}

func joinCauses(errs []error) string {
	s := ""
	for _, err := range errs {
		s += "; " + err.Error()
	}
	return s
}
