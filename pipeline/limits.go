package pipeline

import "github.com/catalogbot/catalogbot/checks/validate"

// limits are the validation limits of this run: the base configuration's, overridden field by field by
// the front-end's (command-line flags).
func (s *state) limits() validate.Limits {
	l := validate.Limits{
		MaxFileBytes:  int64(s.cfg.Limits.MaxFileBytes),
		MaxTotalBytes: int64(s.cfg.Limits.MaxTotalBytes),
		MaxPerRule:    s.cfg.Limits.MaxDiagnosticsPerRule,
	}
	if o := s.in.Limits; o != (validate.Limits{}) {
		l.MaxFileBytes = pick(o.MaxFileBytes, l.MaxFileBytes)
		l.MaxTotalBytes = pick(o.MaxTotalBytes, l.MaxTotalBytes)
		l.MaxPerRule = pick(o.MaxPerRule, l.MaxPerRule)
	}
	return l
}

func pick[T int | int64](override, configured T) T {
	if override != 0 {
		return override
	}
	return configured
}
