// Package graph compares the upgrade graphs of a catalog's packages between two revisions: which channels
// a change adds, removes or rewires, which heads move, and which released bundles it would modify or
// remove (bundles are immutable once published). It renders the diff as Markdown with Mermaid graphs.
package graph
