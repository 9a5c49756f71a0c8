package bot

import (
	"io"
	"log/slog"
	"strings"
)

// sensitiveKeys are attribute keys whose values are never logged.
var sensitiveKeys = []string{"secret", "token", "password", "authorization", "private", "signature", "cookie"}

// NewLogger returns a JSON slog logger that redacts attributes whose key names a credential, whatever
// code logs them.
func NewLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: redact}))
}

func redact(_ []string, a slog.Attr) slog.Attr {
	k := strings.ToLower(a.Key)
	for _, s := range sensitiveKeys {
		if strings.Contains(k, s) {
			return slog.String(a.Key, "[redacted]")
		}
	}
	return a
}
