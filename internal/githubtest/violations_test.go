package githubtest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// raw sends a request straight over HTTP, bypassing go-github.
func raw(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func TestViolationsAnswer400AndFailTheTest(t *testing.T) {
	cases := []struct {
		name, method, path, body string
		want                     []string // fragments of the reported failure
	}{
		{"body field of wrong type", "POST", "/repos/octo/catalog/check-runs", `{"name": "x", "head_sha": 42}`,
			[]string{"POST /repos/octo/catalog/check-runs", "body/head_sha: want string, got number 42"}},
		{"missing required body field", "POST", "/repos/octo/catalog/issues/1/comments", `{}`,
			[]string{`body: missing required property "body"`}},
		{"enum", "PUT", "/repos/octo/catalog/pulls/1/merge", `{"merge_method": "fast-forward"}`,
			[]string{`body/merge_method: string "fast-forward" is not one of ["merge", "squash", "rebase"]`}},
		{"anyOf: completed needs a conclusion", "PATCH", "/repos/octo/catalog/check-runs/1", `{"status": "completed"}`,
			[]string{"matches none of 2 alternatives", `missing required property "conclusion"`}},
		{"nested item type", "POST", "/repos/octo/catalog/check-runs",
			`{"name": "x", "head_sha": "abc", "output": {"title": "t", "summary": "s", "annotations": [{"path": "a", "start_line": "3", "end_line": 3, "annotation_level": "failure", "message": "m"}]}}`,
			[]string{"body/output/annotations/0/start_line: want integer"}},
		{"date-time format", "POST", "/repos/octo/catalog/check-runs", `{"name": "x", "head_sha": "abc", "started_at": "yesterday"}`,
			[]string{`body/started_at: "yesterday" is not an RFC 3339 date-time`}},
		{"invalid JSON", "POST", "/repos/octo/catalog/issues/1/comments", `{"body": `,
			[]string{"body is not valid JSON"}},
		{"integer path parameter", "GET", "/repos/octo/catalog/pulls/one", "",
			[]string{"path parameter pull_number: want integer, got string \"one\""}},
		{"unknown query parameter", "GET", "/repos/octo/catalog/pulls?colour=red", "",
			[]string{`unknown query parameter "colour"`}},
		{"query enum", "GET", "/repos/octo/catalog/pulls?state=merged", "",
			[]string{`query parameter state: string "merged" is not one of`}},
		{"query integer", "GET", "/repos/octo/catalog/pulls?per_page=many", "",
			[]string{"query parameter per_page: want integer"}},
		{"body where none is taken", "GET", "/repos/octo/catalog", `{"x": 1}`,
			[]string{"the operation takes no request body"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tb := &capturingTB{TB: t}
			s := New(tb)
			s.AddPullRequest(repo, PullRequest{})
			status, body := raw(t, tc.method, s.URL+tc.path, tc.body)
			if status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", status, body)
			}
			var e struct{ Message string }
			if err := json.Unmarshal([]byte(body), &e); err != nil || !strings.HasPrefix(e.Message, "Invalid request.") {
				t.Errorf("error body %s (%v)", body, err)
			}
			tb.wantCaptured(t, append([]string{tc.method}, tc.want...)...)
			if got := s.Requests(); len(got) != 1 || got[0].Status != http.StatusBadRequest {
				t.Errorf("recorded %+v", got)
			}
			if len(s.CheckRuns(repo)) != 0 || len(s.Comments(repo, 1)) != 0 {
				t.Error("an invalid request changed the fake's state")
			}
		})
	}
}

func TestUnknownEndpointAnswers404AndFailsTheTest(t *testing.T) {
	for _, tc := range []struct{ method, path, want string }{
		{"GET", "/repos/octo/catalog/frobnicate", "no path in GitHub's REST API description matches /repos/octo/catalog/frobnicate"},
		{"POST", "/repos/octo/catalog/pulls/1", "no POST operation for /repos/{owner}/{repo}/pulls/{pull_number}"},
		{"GET", "/repos/octo/catalog/pulls/1/", "no path"},
	} {
		t.Run(tc.method+tc.path, func(t *testing.T) {
			tb := &capturingTB{TB: t}
			s := New(tb)
			body := ""
			if tc.method == "POST" {
				body = "{}"
			}
			status, _ := raw(t, tc.method, s.URL+tc.path, body)
			if status != http.StatusNotFound {
				t.Fatalf("status %d, want 404", status)
			}
			tb.wantCaptured(t, tc.method, tc.want)
		})
	}
}

func TestUnmodelledOperationAnswers501AndFailsTheTest(t *testing.T) {
	tb := &capturingTB{TB: t}
	s := New(tb)
	status, _ := raw(t, "GET", s.URL+"/repos/octo/catalog/releases/latest", "")
	if status != http.StatusNotImplemented {
		t.Fatalf("status %d, want 501", status)
	}
	tb.wantCaptured(t, "GET /repos/{owner}/{repo}/releases/latest", "repos/get-latest-release", "does not model")
}

// Valid requests produce no failure; a missing object is GitHub's 404, not a test failure.
func TestValidRequestsDoNotFailTheTest(t *testing.T) {
	tb := &capturingTB{TB: t}
	s := New(tb)
	s.AddRepo(repo)
	if status, body := raw(t, "GET", s.URL+"/repos/octo/catalog/pulls/7", ""); status != http.StatusNotFound {
		t.Fatalf("status %d, want 404: %s", status, body)
	}
	if status, body := raw(t, "GET", s.URL+"/api/v3/repos/octo/catalog/pulls?state=all&per_page=100", ""); status != http.StatusOK || body != "[]" {
		t.Fatalf("status %d body %s", status, body)
	}
	// The documented array form of adding labels is tolerated, other shapes are not.
	n := s.AddPullRequest(repo, PullRequest{})
	if status, _ := raw(t, "POST", s.URL+"/repos/octo/catalog/issues/1/labels", `["a", "b"]`); status != http.StatusOK {
		t.Fatalf("labels as an array: %d", status)
	}
	if got := s.PullRequest(repo, n).Labels; len(got) != 2 {
		t.Errorf("labels %q", got)
	}
	if got := tb.captured(); len(got) != 0 {
		t.Fatalf("valid requests reported: %q", got)
	}
	if status, _ := raw(t, "POST", s.URL+"/repos/octo/catalog/issues/1/labels", `[1]`); status != http.StatusBadRequest {
		t.Fatalf("labels as numbers: %d, want 400", status)
	}
	tb.wantCaptured(t, "/labels")
}

func TestRoutesAreGitHubOperations(t *testing.T) {
	sp := realSpec(t)
	for key := range routes {
		method, path, _ := strings.Cut(key, " ")
		item := sp.Paths[path]
		if item == nil || item.operations()[method] == nil {
			t.Errorf("route %q is not an operation in GitHub's description", key)
		}
	}
	for key := range tolerated {
		if sp.Paths[key] == nil {
			t.Errorf("tolerated body for %q, which is not a path in GitHub's description", key)
		}
	}
}

// Requests must not leak between servers.
func TestServersAreIndependent(t *testing.T) {
	a, b := New(t), New(t)
	a.AddRepo(repo)
	if status, _ := raw(t, "GET", b.URL+"/repos/octo/catalog", ""); status != http.StatusNotFound {
		t.Fatalf("b knows a's repository: %d", status)
	}
	if len(a.Requests()) != 0 || len(b.Requests()) != 1 {
		t.Errorf("requests recorded a=%d b=%d", len(a.Requests()), len(b.Requests()))
	}
}

// The fake checks its own answers: an invented field or a wrong type in a response is reported.
func TestResponseSelfCheck(t *testing.T) {
	tb := &capturingTB{TB: t}
	s := New(tb)
	rt, err := s.spec.findRoute("GET", "/repos/octo/catalog/pulls/1")
	if err != nil {
		t.Fatal(err)
	}
	s.checkResponse("GET", "/repos/octo/catalog/pulls/1", rt, 200, []byte(`{"number": 1, "title": "t"}`))
	if got := tb.captured(); len(got) != 0 {
		t.Fatalf("a well-shaped answer reported: %q", got)
	}
	s.checkResponse("GET", "/repos/octo/catalog/pulls/1", rt, 200, []byte(`{"number": "1", "colour": "red"}`))
	tb.wantCaptured(t, "a bug in githubtest", "response/number: want integer", `unknown property "colour"`)
}
