package template

import (
	"context"

	"github.com/catalogbot/catalogbot/catalog"
)

// substitutes refuses olm.template.substitutes templates: catalogbot does not render them yet, and says so
// rather than render them differently from opm.
func (t *run) substitutes(context.Context) (*catalog.Catalog, error) {
	return nil, t.fail(t.lines.top("schema"), "olm.template.substitutes templates are not supported by catalogbot yet; render them with opm alpha render-template", nil)
}
