// Package registry is how every catalogbot client talks to container registries: one set of remote
// options (plain HTTP only to loopback registries, a deadline per request and a shorter one for the
// answer's headers, a per-job Breaker so a host that timed out is not asked again, credentials from a
// keychain, retries of 5xx/429 and network flakes with back-off but never of a timeout, the user agent),
// so the image checks, rendering, building and publishing cannot drift apart.
package registry
