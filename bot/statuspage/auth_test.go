package statuspage

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const statusToken = "status-token-7a3e5c1d90"

// Without a configured status token the pages are refused (403), never open; a short token is a
// configuration error.
func TestStatusTokenConfiguration(t *testing.T) {
	for _, tc := range []struct {
		name  string
		token string
		req   func(*http.Request)
		want  int
	}{
		{"no token configured", "", nil, http.StatusForbidden},
		{"no token configured, one sent", "", func(r *http.Request) { r.Header.Set("Authorization", "Bearer ") }, http.StatusForbidden},
		{"token configured, none sent", statusToken, nil, http.StatusUnauthorized},
		{"token configured and sent", statusToken, func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+statusToken) }, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := New(Options{Token: tc.token}).RequireToken(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			if tc.req != nil {
				tc.req(req)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != tc.want {
				t.Errorf("%d, want %d", w.Code, tc.want)
			}
		})
	}
	dir := t.TempDir()
	short, long := filepath.Join(dir, "short"), filepath.Join(dir, "long")
	_ = os.WriteFile(short, []byte("tooshort\n"), 0o600)
	_ = os.WriteFile(long, []byte(statusToken+"\n"), 0o600)
	for file, ok := range map[string]bool{short: false, long: true, filepath.Join(dir, "missing"): false} {
		c := Config{TokenFile: file}
		tok, err := c.LoadToken()
		if ok != (err == nil) || ok && tok != statusToken {
			t.Errorf("%s: %q %v", filepath.Base(file), tok, err)
		}
		if err != nil && strings.Contains(err.Error(), "tooshort") {
			t.Errorf("the error tells the token: %v", err)
		}
	}
}
