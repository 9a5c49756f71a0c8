package policy

import (
	"context"
	"testing"

	"github.com/catalogbot/catalogbot/checks/validate"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// The policy stage's cost next to validation's, in the same run: BenchmarkValidate/X validates catalog X
// as catalogbot validate does; BenchmarkValidatePolicy/X does the same with the community and olmv1
// presets, their property values collected during validate's one load. The difference is the policy's
// cost:
//
//	go test ./checks/policy -run '^$' -bench 'Validate' -benchtime 5x
func BenchmarkValidate(b *testing.B) { benchCatalogs(b, false) }

func BenchmarkValidatePolicy(b *testing.B) { benchCatalogs(b, true) }

func benchCatalogs(b *testing.B, withPolicy bool) {
	sev := SeveritiesOf(config.PolicyConfig{Presets: []string{config.PresetCommunity, config.PresetOLMv1}})
	for _, name := range []string{"composed-279", "community-operators-prod-v4.16"} {
		dir := shareddata.Dir(b, "catalogs", name)
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				var opts validate.Options
				var col *Collector
				if withPolicy {
					col = NewCollector(sev)
					opts.VisitBundle = col.Visit
				}
				res, err := validate.Dir(context.Background(), dir, opts)
				if err != nil || !res.Valid() {
					b.Fatalf("%v %v", err, res.Diagnostics)
				}
				if withPolicy {
					out, err := Run(context.Background(), Input{Catalog: res.Catalog, Collected: col}, sev)
					if err != nil || out.Bundles == 0 {
						b.Fatalf("%v %+v", err, out)
					}
				}
			}
		})
	}
}
