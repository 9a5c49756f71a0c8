package bundle

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/catalogbot/catalogbot/render/bundle/internal/kubetypes"
)

// csvObject is the view of a ClusterServiceVersion that opm's bundle parser takes: type and object metadata
// decoded (so wrongly typed metadata fails), the spec kept raw and read field by field on demand.
type csvObject struct {
	file string
	kubetypes.TypeMeta
	kubetypes.ObjectMeta
	spec json.RawMessage // nil when the CSV has no spec: every spec accessor then fails, as in opm
}

// UnmarshalJSON reads the three parts independently, as opm does.
func (c *csvObject) UnmarshalJSON(data []byte) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return err
	}
	c.spec = top["spec"]
	if err := json.Unmarshal(data, &c.TypeMeta); err != nil {
		return err
	}
	var meta struct {
		Metadata kubetypes.ObjectMeta `json:"metadata"`
	}
	if err := json.Unmarshal(data, &meta); err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	c.ObjectMeta = meta.Metadata
	return nil
}

// newCSV converts a decoded CSV object as opm does: apimachinery's unstructured converter encodes it to
// JSON (the manifest's JSON) and hands that to csvObject's UnmarshalJSON.
func newCSV(m *manifest) (*csvObject, error) {
	c := &csvObject{file: m.file}
	if err := c.UnmarshalJSON(m.json); err != nil {
		return nil, fmt.Errorf("%s: reading ClusterServiceVersion: %w", m.file, err)
	}
	return c, nil
}

// field returns spec.<name>, nil when absent or null. It fails when there is no spec object.
func (c *csvObject) field(name string) (*json.RawMessage, error) {
	var spec map[string]*json.RawMessage
	if err := json.Unmarshal(c.spec, &spec); err != nil {
		if c.spec == nil {
			return nil, fmt.Errorf("%s: the ClusterServiceVersion has no spec", c.file)
		}
		return nil, fmt.Errorf("%s: spec is not an object: %w", c.file, err)
	}
	return spec[name], nil
}

// decodeField decodes spec.<name> into v; absent or null leaves v alone.
func (c *csvObject) decodeField(name string, v any) error {
	raw, err := c.field(name)
	if err != nil || raw == nil {
		return err
	}
	if err := json.Unmarshal(*raw, v); err != nil {
		return fmt.Errorf("%s: spec.%s: %w", c.file, name, err)
	}
	return nil
}

// version is spec.version ("" when absent); it must be a string.
func (c *csvObject) version() (string, error) {
	var v string
	err := c.decodeField("version", &v)
	return v, err
}

// release is spec.release ("" when absent): a string, or a number written as an integer when whole.
func (c *csvObject) release() (string, error) {
	raw, err := c.field("release")
	if err != nil || raw == nil {
		return "", err
	}
	var s string
	if json.Unmarshal(*raw, &s) == nil {
		return s, nil
	}
	var f float64
	if json.Unmarshal(*raw, &f) == nil {
		if f == float64(int64(f)) {
			return strconv.FormatInt(int64(f), 10), nil
		}
		return strconv.FormatFloat(f, 'g', -1, 64), nil
	}
	return "", fmt.Errorf("%s: spec.release must be a string or a number, not %s", c.file, *raw)
}

// definitionKey is one entry of spec.customresourcedefinitions or spec.apiservicedefinitions.
type definitionKey struct {
	Group   string `json:"group"`
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Version string `json:"version"`
}

type definitions struct {
	Owned    []*definitionKey `json:"owned"`
	Required []*definitionKey `json:"required"`
}

// definitions decodes spec.<section> (customresourcedefinitions or apiservicedefinitions). A null entry
// crashes opm; here it is an error.
func (c *csvObject) definitions(section string) (*definitions, error) {
	var d definitions
	if err := c.decodeField(section, &d); err != nil {
		return nil, err
	}
	for i, k := range d.Owned {
		if k == nil {
			return nil, fmt.Errorf("%s: spec.%s.owned[%d] is null", c.file, section, i)
		}
	}
	for i, k := range d.Required {
		if k == nil {
			return nil, fmt.Errorf("%s: spec.%s.required[%d] is null", c.file, section, i)
		}
	}
	return &d, nil
}

// relatedImage is one entry of spec.relatedImages.
type relatedImage struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}

// operatorImages returns the images of the containers and init containers of the deployment install
// strategy's deployments. The whole install strategy must decode as apps/v1 deployment specs (Go's
// case-insensitive field matching included), as in opm.
func (c *csvObject) operatorImages() (map[string]struct{}, error) {
	var spec struct {
		Install struct {
			Name string `json:"strategy"`
			Spec struct {
				Deployments []struct {
					Name string
					Spec kubetypes.DeploymentSpec `json:"spec"`
				}
			} `json:"spec"`
		}
	}
	if err := json.Unmarshal(c.spec, &spec); err != nil {
		if c.spec == nil {
			return nil, fmt.Errorf("%s: the ClusterServiceVersion has no spec", c.file)
		}
		return nil, fmt.Errorf("%s: spec.install: %w", c.file, err)
	}
	if spec.Install.Name != "deployment" {
		return nil, nil
	}
	images := map[string]struct{}{}
	for _, d := range spec.Install.Spec.Deployments {
		for _, ct := range d.Spec.Template.Spec.Containers {
			images[ct.Image] = struct{}{}
		}
		for _, ct := range d.Spec.Template.Spec.InitContainers {
			images[ct.Image] = struct{}{}
		}
	}
	return images, nil
}
