// Package images verifies that every image a catalog references exists in its registry, without pulling
// layers: one manifest HEAD per unique reference, with bounded concurrency, retries on transient registry
// failures, and diagnostics that name each place the image is used. Optional policies require digest
// pinning, restrict registries and require platforms.
//
// Registry failures are classified by HTTP status and registry error codes, never by message text: a
// missing manifest or repository is the catalog author's fault (severity error, category invalid); a
// registry that is down, rate-limits or cannot be reached is infrastructure (Check returns an error marked
// diag.Infra, exit 3).
package images
