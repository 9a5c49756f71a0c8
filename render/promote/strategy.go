package promote

import (
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/catalogbot/catalogbot/render/template"
)

// Strategy is a package's fbc.version_promotion_strategy: whether a new cluster version's catalog gains
// the package.
type Strategy string

// The strategies of operator-pipelines' ci.yaml (docs/users/operator-ci-yaml.md, scripts/promote-catalog.py).
const (
	// Never: the package is not promoted.
	Never Strategy = "never"
	// Always: promoted; upstream merges these without a maintainer's review, all packages in one pull request.
	Always Strategy = "always"
	// ReviewNeeded: promoted, one pull request per package that a maintainer of the package must review
	// (upstream labels it catalog-promotion/review-needed). The default when the field is absent.
	ReviewNeeded Strategy = "review-needed"
)

// StrategyKey is the ci.yaml field, under fbc.
const StrategyKey = "version_promotion_strategy"

// StrategyOf reads fbc.version_promotion_strategy of a ci.yaml and the line it is on (0 when absent:
// ReviewNeeded, upstream's default since operator-pipelines fa3914c0, 2025-05). A value upstream does
// not know is an error on its line (upstream's script skips such a package with a warning).
func StrategyOf(data []byte) (Strategy, int, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return "", 0, err
	}
	if len(doc.Content) == 0 {
		return ReviewNeeded, 0, nil
	}
	_, fbc := template.Field(doc.Content[0], "fbc")
	_, v := template.Field(fbc, StrategyKey)
	if v == nil {
		return ReviewNeeded, 0, nil
	}
	if s := Strategy(v.Value); v.Kind == yaml.ScalarNode && (s == Never || s == Always || s == ReviewNeeded) {
		return s, v.Line, nil
	}
	return "", v.Line, fmt.Errorf("fbc.%s %q is not %s, %s or %s", StrategyKey, v.Value, Always, ReviewNeeded, Never)
}
