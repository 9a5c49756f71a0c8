package githubtest

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

type segKind int

const (
	segLiteral segKind = iota // "pulls"
	segParam                  // "{pull_number}", or a segment mixing text and parameters: "{base}...{head}"
	segMulti                  // an x-multi-segment parameter: "{ref}" matching "heads/main"
)

// template is one compiled OpenAPI path template with its operations by HTTP method.
type template struct {
	path  string
	segs  []tseg
	multi bool // has a multi-segment parameter
	ops   map[string]*operation
}

type tseg struct {
	kind  segKind
	lit   string         // segLiteral
	name  string         // segParam or segMulti naming one parameter
	re    *regexp.Regexp // segParam mixing text and parameters
	names []string       // the parameters re captures
}

var paramRE = regexp.MustCompile(`\{([^}]+)\}`)

func compileTemplate(path string, item *pathItem, sp *spec) (*template, error) {
	t := &template{path: path, ops: item.operations()}
	multi := map[string]bool{}
	for _, op := range t.ops {
		for _, p := range op.Parameters {
			if p.In == "path" && p.MultiSegment {
				multi[p.Name] = true
			}
		}
	}
	for _, s := range strings.Split(strings.TrimPrefix(path, "/"), "/") {
		m := paramRE.FindAllStringSubmatchIndex(s, -1)
		switch {
		case len(m) == 0:
			t.segs = append(t.segs, tseg{kind: segLiteral, lit: s})
		case len(m) == 1 && m[0][0] == 0 && m[0][1] == len(s):
			name := s[1 : len(s)-1]
			kind := segParam
			if multi[name] {
				kind = segMulti
				t.multi = true
			}
			t.segs = append(t.segs, tseg{kind: kind, name: name})
		default:
			var expr strings.Builder
			var names []string
			last := 0
			for _, idx := range m {
				expr.WriteString(regexp.QuoteMeta(s[last:idx[0]]))
				expr.WriteString("(.+?)")
				names = append(names, s[idx[2]:idx[3]])
				last = idx[1]
			}
			expr.WriteString(regexp.QuoteMeta(s[last:]))
			re, err := regexp.Compile("^" + expr.String() + "$")
			if err != nil {
				return nil, fmt.Errorf("path template %s: %w", path, err)
			}
			t.segs = append(t.segs, tseg{kind: segParam, re: re, names: names})
		}
	}
	return t, nil
}

// match binds the escaped request path segments to t. kinds records, per request segment, the kind of
// template segment that consumed it (for choosing the most specific template).
func (t *template) match(segs []string) (params map[string]string, kinds []segKind, ok bool) {
	if len(segs) < len(t.segs) || (!t.multi && len(segs) != len(t.segs)) {
		return nil, nil, false
	}
	for i, ts := range t.segs { // cheap rejection on the literal prefix
		if ts.kind != segLiteral {
			break
		}
		if segs[i] != ts.lit && !strings.Contains(segs[i], "%") {
			return nil, nil, false
		}
	}
	params = map[string]string{}
	var rec func(ti, ri int) bool
	rec = func(ti, ri int) bool {
		if ti == len(t.segs) {
			return ri == len(segs)
		}
		if ri == len(segs) {
			return false
		}
		ts := t.segs[ti]
		switch ts.kind {
		case segLiteral:
			v, err := url.PathUnescape(segs[ri])
			if err != nil || v != ts.lit {
				return false
			}
			kinds = append(kinds, segLiteral)
			if rec(ti+1, ri+1) {
				return true
			}
			kinds = kinds[:len(kinds)-1]
		case segParam:
			v, err := url.PathUnescape(segs[ri])
			if err != nil || v == "" {
				return false
			}
			if ts.re == nil {
				params[ts.name] = v
			} else {
				sub := ts.re.FindStringSubmatch(v)
				if sub == nil {
					return false
				}
				for i, n := range ts.names {
					params[n] = sub[i+1]
				}
			}
			kinds = append(kinds, segParam)
			if rec(ti+1, ri+1) {
				return true
			}
			kinds = kinds[:len(kinds)-1]
		case segMulti:
			// The shortest binding first, so literals after the parameter get their chance.
			for end := ri + 1; end <= len(segs); end++ {
				parts := make([]string, 0, end-ri)
				bad := false
				for _, s := range segs[ri:end] {
					v, err := url.PathUnescape(s)
					if err != nil || v == "" {
						bad = true
						break
					}
					parts = append(parts, v)
				}
				if bad {
					return false
				}
				params[ts.name] = strings.Join(parts, "/")
				n := len(kinds)
				for range parts {
					kinds = append(kinds, segMulti)
				}
				if rec(ti+1, end) {
					return true
				}
				kinds = kinds[:n]
			}
		}
		return false
	}
	if !rec(0, 0) {
		return nil, nil, false
	}
	return params, kinds, true
}

// moreSpecific reports whether binding a beats binding b: more literal segments first, then literals
// earlier in the path, then single-segment parameters over multi-segment ones.
func moreSpecific(a, b []segKind) bool {
	la, lb := countKind(a, segLiteral), countKind(b, segLiteral)
	if la != lb {
		return la > lb
	}
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

func countKind(ks []segKind, k segKind) int {
	n := 0
	for _, x := range ks {
		if x == k {
			n++
		}
	}
	return n
}

// route is a request resolved to an OpenAPI operation.
type route struct {
	template string // "/repos/{owner}/{repo}/pulls/{pull_number}"
	op       *operation
	params   map[string]string // path parameters, unescaped
}

// findRoute resolves method and escaped path to the most specific template holding that method. It fails
// naming the path when no template matches and naming the method when the path exists without it.
func (sp *spec) findRoute(method, escapedPath string) (route, error) {
	segs := strings.Split(strings.TrimPrefix(escapedPath, "/"), "/")
	var best *template
	var bestParams map[string]string
	var bestKinds []segKind
	pathMatched := ""
	for _, t := range sp.templates {
		params, kinds, ok := t.match(segs)
		if !ok {
			continue
		}
		if t.ops[method] == nil {
			pathMatched = t.path
			continue
		}
		if best == nil || moreSpecific(kinds, bestKinds) || (!moreSpecific(bestKinds, kinds) && t.path < best.path) {
			best, bestParams, bestKinds = t, params, kinds
		}
	}
	if best == nil && pathMatched != "" {
		return route{}, fmt.Errorf("GitHub's REST API description has no %s operation for %s", method, pathMatched)
	}
	if best == nil {
		return route{}, fmt.Errorf("no path in GitHub's REST API description matches %s", escapedPath)
	}
	op := best.ops[method]
	return route{template: best.path, op: op, params: bestParams}, nil
}
