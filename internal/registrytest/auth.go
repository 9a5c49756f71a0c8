package registrytest

import (
	"crypto/subtle"
	"net/http"
	"sync"
)

// BasicAuth is a wrap for New: the registry answers 401 with a Basic challenge unless a request carries
// user and password. It records the user names of the requests it saw (Users), "" for anonymous ones.
type BasicAuth struct {
	User, Password string

	mu    sync.Mutex
	users []string
}

// Wrap puts the credential check in front of h.
func (a *BasicAuth) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		a.mu.Lock()
		a.users = append(a.users, u)
		a.mu.Unlock()
		if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(a.User)) != 1 || subtle.ConstantTimeCompare([]byte(p), []byte(a.Password)) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="registrytest"`)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Users lists the user names requests came with, in order ("" for none).
func (a *BasicAuth) Users() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.users...)
}
