package render

// PlainSafe reports whether v, written plain as a mapping value, reads back as the string v (bump's rule
// for keeping a scalar unquoted; render/release writes release names by it too).
func PlainSafe(v string) bool { return plainSafe(v) }
