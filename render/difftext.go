package render

// UnifiedDiff is a unified diff of a (aName) and b (bName) of at most maxLines lines, and the first line
// of a that differs: what the drift check shows, for callers comparing other renders.
func UnifiedDiff(aName, bName string, a, b []byte, maxLines int) (string, int) {
	return unifiedDiff(aName, bName, a, b, maxLines)
}
