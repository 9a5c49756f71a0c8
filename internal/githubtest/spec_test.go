package githubtest

import (
	"os"
	"strings"
	"testing"
	"time"
)

// patternSamples are valid values for the patterned path parameters in GitHub's description.
var patternSamples = map[string]string{
	`^\d+\.\d+\.\d+$`:       "1.2.3",
	`^sha256:[a-f0-9]{64}$`: "sha256:" + strings.Repeat("a", 64),
}

func realSpec(t *testing.T) *spec {
	t.Helper()
	start := time.Now()
	sp, err := loadSpec()
	if err != nil {
		if isNotExist(err) && os.Getenv("CATALOGBOT_REQUIRE_TOOLS") != "1" {
			t.Skipf("GITHUB OPENAPI DESCRIPTION NOT FOUND: %v", err)
		}
		t.Fatal(err)
	}
	t.Logf("GitHub OpenAPI description: %d paths (loaded or cached in %v)", len(sp.Paths), time.Since(start))
	return sp
}

// Every operation in GitHub's description routes back to its own template when called with sample
// parameter values, and its parameters validate: the matcher and parameter checks agree with the whole
// description, not just the endpoints the fake models.
func TestEveryOperationRoutesToItself(t *testing.T) {
	sp := realSpec(t)
	if len(sp.Paths) < 800 {
		t.Fatalf("only %d paths parsed", len(sp.Paths))
	}
	ops := 0
	for _, tmpl := range sp.templates {
		for method, op := range tmpl.ops {
			ops++
			sample := map[string]string{}
			for _, p := range op.Parameters {
				if p.In != "path" {
					continue
				}
				s, err := sp.resolve(p.Schema)
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case s.Type == "integer" || (len(s.OneOf) > 0 && s.OneOf[0].Type == "integer"):
					sample[p.Name] = "12345"
				case len(s.Enum) > 0:
					sample[p.Name] = s.Enum[0].(string)
				default:
					sample[p.Name] = "zz-" + p.Name
				}
				if re := s.compiledPattern(); re != nil && !re.MatchString(sample[p.Name]) {
					v, ok := patternSamples[s.Pattern]
					if !ok {
						t.Fatalf("%s %s: add a sample for path parameter %s matching %s", method, tmpl.path, p.Name, s.Pattern)
					}
					sample[p.Name] = v
				}
			}
			path := paramRE.ReplaceAllStringFunc(tmpl.path, func(m string) string { return sample[m[1:len(m)-1]] })
			rt, err := sp.findRoute(method, path)
			if err != nil {
				t.Errorf("%s %s (%s): %v", method, path, tmpl.path, err)
				continue
			}
			if rt.template != tmpl.path {
				t.Errorf("%s %s routed to %s, want %s", method, path, rt.template, tmpl.path)
				continue
			}
			if _, v := sp.checkRequest(rt, nil, "", nil); len(v) > 0 && !strings.Contains(strings.Join(v, ";"), "missing required") {
				t.Errorf("%s %s: sample parameters rejected: %q", method, path, v)
			}
		}
	}
	t.Logf("%d operations route to themselves", ops)
}

func BenchmarkRouteAndValidate(b *testing.B) {
	sp, err := loadSpec()
	if err != nil {
		b.Skipf("GITHUB OPENAPI DESCRIPTION NOT FOUND: %v", err)
	}
	body := []byte(`{"name":"catalogbot/validate","head_sha":"abc","status":"completed","conclusion":"failure","output":{"title":"t","summary":"s","annotations":[{"path":"a","start_line":1,"end_line":1,"annotation_level":"failure","message":"m"}]}}`)
	for b.Loop() {
		rt, err := sp.findRoute("POST", "/repos/octo/catalog/check-runs")
		if err != nil {
			b.Fatal(err)
		}
		if _, v := sp.checkRequest(rt, nil, "application/json", body); len(v) > 0 {
			b.Fatal(v)
		}
	}
}
