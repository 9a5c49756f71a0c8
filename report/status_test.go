package report

import (
	"testing"

	"github.com/catalogbot/catalogbot/diag"
)

// The category order of diag.Worse and the status order of Worse are one ranking: whichever a caller
// combines first, the verdict is the same.
func TestCategoryOrderMatchesVerdictOrder(t *testing.T) {
	cats := []diag.Category{diag.Internal, diag.Invalid, diag.Usage, diag.Infra}
	for _, a := range cats {
		for _, b := range cats {
			got := CategoryStatus(diag.Worse(a, b))
			want := Worse(CategoryStatus(a), CategoryStatus(b))
			if got != want {
				t.Errorf("Worse(%s, %s): categories give %s, statuses %s", a, b, got, want)
			}
		}
	}
}
