// Package registry is how every catalogbot client talks to container registries: one set of remote
// options (plain HTTP only to loopback registries, a deadline per request, credentials from a keychain,
// retries of 5xx/429 with back-off, the user agent), so the image checks, rendering, building and
// publishing cannot drift apart.
package registry
