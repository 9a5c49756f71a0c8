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
//
// BenchmarkValidatePolicyOwnRules turns operator-framework's validators (policy-of-*) off: the rest of
// the policy, next to validation.
func BenchmarkValidate(b *testing.B) { benchCatalogs(b, nil) }

func BenchmarkValidatePolicy(b *testing.B) {
	benchCatalogs(b, SeveritiesOf(config.PolicyConfig{Presets: []string{config.PresetCommunity, config.PresetOLMv1}}))
}

func BenchmarkValidatePolicyOwnRules(b *testing.B) {
	sev := SeveritiesOf(config.PolicyConfig{Presets: []string{config.PresetCommunity, config.PresetOLMv1}})
	for _, id := range ofRules {
		delete(sev, id)
	}
	benchCatalogs(b, sev)
}

func benchCatalogs(b *testing.B, sev Severities) {
	withPolicy := sev != nil
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
					out, err := Run(context.Background(), Input{Catalog: res.Catalog, Collected: col, Reread: rereadDir(dir)}, sev)
					if err != nil || out.Bundles == 0 {
						b.Fatalf("%v %+v", err, out)
					}
				}
			}
		})
	}
}
