package validate

import (
	_ "crypto/sha256" // registers the digest algorithm image references use
	_ "crypto/sha512"
	"strings"

	"go.podman.io/image/v5/docker/reference"
)

// parsePullSpec validates an image reference the way opm does (reference.ParseNormalizedNamed), with the
// library's regular expressions. refCache.check recognises the common shape, registry/path[:tag][@sha256:hex],
// without them first (plainReference); a reference that fast path is not sure of always comes here, so the
// verdicts are the same.
func parsePullSpec(ref string) error {
	_, err := reference.ParseNormalizedNamed(ref)
	return err
}

// plainReference reports whether ref is certainly valid: a domain (with a dot, a port or localhost), one
// or more lower-case path components, an optional tag and an optional sha256 digest.
func plainReference(ref string) bool {
	name, dig, hasDigest := strings.Cut(ref, "@")
	if hasDigest {
		hex, ok := strings.CutPrefix(dig, "sha256:")
		if !ok || len(hex) != 64 || !all(hex, func(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }) {
			return false
		}
	}
	if i := strings.LastIndexByte(name, ':'); i > strings.LastIndexByte(name, '/') {
		tag := name[i+1:]
		if len(tag) == 0 || len(tag) > 128 || tag[0] == '.' || tag[0] == '-' ||
			!all(tag, func(c byte) bool { return isAlnum(c) || c == '_' || c == '.' || c == '-' }) {
			return false
		}
		name = name[:i]
	}
	if len(name) > 255 {
		return false
	}
	domain, path, ok := strings.Cut(name, "/") // (component by component: no slice of them per reference)
	if !ok || !plainDomain(domain) {
		return false
	}
	for more := true; more; {
		var p string
		p, path, more = strings.Cut(path, "/")
		if !plainPathComponent(p) {
			return false
		}
	}
	return true
}

func plainDomain(d string) bool {
	host, port, hasPort := strings.Cut(d, ":")
	if hasPort && (port == "" || !all(port, func(c byte) bool { return '0' <= c && c <= '9' })) {
		return false
	}
	if host != "localhost" && !hasPort && !strings.Contains(host, ".") {
		return false
	}
	for label := range strings.SplitSeq(host, ".") {
		if label == "" || !isAlnum(label[0]) || !isAlnum(label[len(label)-1]) ||
			!all(label, func(c byte) bool { return isAlnum(c) || c == '-' }) {
			return false
		}
	}
	return true
}

// plainPathComponent is [a-z0-9]+ separated by ".", "_", "__" or runs of "-".
func plainPathComponent(p string) bool {
	if p == "" || !isLowerAlnum(p[0]) || !isLowerAlnum(p[len(p)-1]) {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case isLowerAlnum(c):
		case c == '.' || c == '_':
			if !isLowerAlnum(p[i+1]) && !(c == '_' && p[i+1] == '_' && i+2 < len(p) && isLowerAlnum(p[i+2])) {
				return false
			}
			if c == '_' && p[i+1] == '_' {
				i++
			}
		case c == '-':
			for i+1 < len(p) && p[i+1] == '-' {
				i++
			}
			if !isLowerAlnum(p[i+1]) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool      { return isLowerAlnum(c) || 'A' <= c && c <= 'Z' }
func isLowerAlnum(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

func all(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}
