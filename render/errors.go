package render

import (
	"errors"

	"github.com/catalogbot/catalogbot/diag"
)

// ruledError gives an error the diagnostic rule and hint Render reports it with.
type ruledError struct {
	rule, hint string
	err        error
}

func (e *ruledError) Error() string { return e.err.Error() }
func (e *ruledError) Unwrap() error { return e.err }

func ruleErr(rule, hint string, err error) error {
	return &ruledError{rule: rule, hint: hint, err: err}
}

// ruleOf returns the rule and hint marked on err's chain ("render-reference" when none is).
func ruleOf(err error) (rule, hint string) {
	var re *ruledError
	if errors.As(err, &re) {
		return re.rule, re.hint
	}
	return "render-reference", ""
}

// worst picks the category a run with these failures exits with: a bug first, then the infrastructure
// (the result is incomplete through no fault of the user), then the user's setup, then the references.
func worst(errs []error) diag.Category {
	rank := map[diag.Category]int{diag.Internal: 4, diag.Infra: 3, diag.Usage: 2, diag.Invalid: 1}
	best := diag.Invalid
	for _, err := range errs {
		if c := diag.CategoryOf(err); rank[c] > rank[best] {
			best = c
		}
	}
	return best
}
