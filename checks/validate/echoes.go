package validate

import "github.com/catalogbot/catalogbot/internal/diag"

// withoutEchoes drops the model diagnostics that only echo a load error: a bundle the loader rejected
// (an olm.bundle.object that is not base64, say) is not in the model, so each channel entry naming it
// would also read as an entry without a bundle. The load error says what is wrong; opm reports it alone.
func withoutEchoes(loadDiags, modelDiags []diag.Diagnostic) []diag.Diagnostic {
	rejected := map[[2]string]bool{}
	for _, d := range loadDiags {
		if d.Severity == diag.Error && d.Bundle != "" {
			rejected[[2]string{d.Package, d.Bundle}] = true
		}
	}
	if len(rejected) == 0 {
		return modelDiags
	}
	kept := make([]diag.Diagnostic, 0, len(modelDiags))
	for _, d := range modelDiags {
		if d.Rule == "channel-entry-without-bundle" && rejected[[2]string{d.Package, d.Bundle}] {
			continue
		}
		kept = append(kept, d)
	}
	return kept
}
