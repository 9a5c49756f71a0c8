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

// worst picks the category a run with these failures exits with, in the verdict's order (diag.Worse):
// a reference that is wrong fails the render even when a registry was also down.
func worst(errs []error) diag.Category {
	c := diag.Infra
	for _, err := range errs {
		c = diag.Worse(c, diag.CategoryOf(err))
	}
	return c
}
