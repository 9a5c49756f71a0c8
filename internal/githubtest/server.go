// Package githubtest is a fake GitHub REST API for tests of the bot: an in-memory, stateful model of the
// repositories, pull requests, check runs, comments, reviews, statuses, merges, refs, permissions, team
// memberships and installation tokens the bot uses, served over HTTP on loopback.
//
// Every request is validated against GitHub's published OpenAPI description (path, method, path and query
// parameters, JSON body). A violation answers 400 and fails the test through t.Errorf naming the method,
// path and violation; a path or method GitHub does not have answers 404 and fails the test the same way.
// Responses the fake produces are checked against the documented response schemas too (field names,
// types, enums, nullability), so the fake cannot drift from what go-github decodes.
package githubtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is a running fake of api.github.com. Point a go-github client at it with
// github.NewClient(github.WithURLs(&base, nil)) where base is s.URL+"/", or with
// github.WithEnterpriseURLs(s.URL, s.URL): the fake also serves under /api/v3/.
type Server struct {
	URL string

	t    testing.TB
	spec *spec

	mu       sync.Mutex
	repos    map[string]*repoState        // lower-case "owner/name"
	teams    map[string]map[string]string // lower-case "org/team" → lower-case login → role
	actor    string
	ids      int64
	ticks    int64
	tokens   int
	faults   []*fault
	recorded []Recorded
	branches Branches
}

// Recorded is one request the fake received, in arrival order.
type Recorded struct {
	Method string
	Path   string // escaped, without an /api/v3 prefix
	Query  string // encoded with sorted keys
	Body   string
	Status int // the status the fake answered
}

// New starts a fake GitHub for the test's lifetime. It skips the test when GitHub's OpenAPI description is
// not available (fails instead under CATALOGBOT_REQUIRE_TOOLS=1).
func New(t testing.TB) *Server {
	t.Helper()
	sp, err := loadSpec()
	if err != nil {
		if isNotExist(err) && os.Getenv("CATALOGBOT_REQUIRE_TOOLS") != "1" {
			t.Skipf("GITHUB OPENAPI DESCRIPTION NOT FOUND (set CATALOGBOT_SHARED_DATA): %v", err)
		}
		t.Fatalf("githubtest: %v", err)
	}
	s := &Server{
		t: t, spec: sp, actor: "catalogbot[bot]",
		repos: map[string]*repoState{}, teams: map[string]map[string]string{},
	}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Recorded(nil), s.recorded...)
}

// maxBody bounds the request bodies the fake reads.
const maxBody = 32 << 20

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		s.t.Errorf("githubtest: %s %s: reading the request body: %v", r.Method, r.URL.Path, err)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	path := r.URL.EscapedPath()
	if p, ok := strings.CutPrefix(path, "/api/v3/"); ok {
		path = "/" + p
	}
	query := r.URL.Query()
	rec := Recorded{Method: r.Method, Path: path, Query: query.Encode(), Body: string(body)}
	status, header, payload := s.answer(r, path, query, body)
	rec.Status = status

	s.mu.Lock()
	s.recorded = append(s.recorded, rec)
	seq := len(s.recorded)
	s.mu.Unlock()

	if status == dropStatus {
		// A connection drop: no answer at all.
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	}
	h := w.Header()
	for k, vs := range header {
		h[k] = vs
	}
	h.Set("X-GitHub-Request-Id", fmt.Sprintf("FAKE:%d", seq))
	if h.Get("X-RateLimit-Remaining") == "" {
		h.Set("X-RateLimit-Limit", "5000")
		h.Set("X-RateLimit-Remaining", "4999")
		h.Set("X-RateLimit-Used", "1")
		h.Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10))
		h.Set("X-RateLimit-Resource", "core")
	}
	if len(payload) > 0 && h.Get("Content-Type") == "" {
		h.Set("Content-Type", "application/json; charset=utf-8")
	}
	w.WriteHeader(status)
	_, _ = w.Write(payload)
}

// answer routes, validates and handles one request, returning what to send.
func (s *Server) answer(r *http.Request, path string, query url.Values, body []byte) (int, http.Header, []byte) {
	rt, err := s.spec.findRoute(r.Method, path)
	if err != nil {
		s.t.Errorf("githubtest: %s %s: %v", r.Method, path, err)
		return errorReply(http.StatusNotFound, "Not Found")
	}
	decoded, violations := s.spec.checkRequest(rt, query, r.Header.Get("Content-Type"), body)
	if len(violations) > 0 {
		s.t.Errorf("githubtest: %s %s (%s %s) violates GitHub's REST API description:\n\t%s",
			r.Method, path, r.Method, rt.template, strings.Join(violations, "\n\t"))
		return errorReply(http.StatusBadRequest, "Invalid request.\n\n"+strings.Join(violations, "\n"))
	}
	f := s.takeFault(r.Method, path)
	if f != nil && !f.Applied {
		return s.faultReply(f)
	}
	h := routes[r.Method+" "+rt.template]
	if h == nil {
		s.t.Errorf("githubtest: %s %s is GitHub's %s %s (%s), which the fake does not model",
			r.Method, path, r.Method, rt.template, rt.op.OperationID)
		return errorReply(http.StatusNotImplemented, "githubtest does not model "+rt.op.OperationID)
	}
	c := &call{s: s, rt: rt, query: query, body: body, decoded: decoded, header: http.Header{}, path: path}
	s.mu.Lock()
	rep := h(c)
	s.mu.Unlock()
	var payload []byte
	if rep.body != nil {
		payload, err = json.Marshal(rep.body)
		if err != nil {
			s.t.Errorf("githubtest: %s %s: encoding the response: %v", r.Method, path, err)
			return errorReply(http.StatusInternalServerError, "githubtest: encoding failed")
		}
		s.checkResponse(r.Method, path, rt, rep.status, payload)
	}
	if f != nil {
		return s.faultReply(f) // applied, then failed
	}
	return rep.status, c.header, payload
}

// dropStatus is the recorded status of a request whose connection the fake closed without answering.
const dropStatus = 0

func (s *Server) faultReply(f *Fault) (int, http.Header, []byte) {
	if f.Drop {
		return dropStatus, nil, nil
	}
	return f.Status, f.Header.Clone(), []byte(f.Body)
}

// checkResponse fails the test when the fake's own answer does not fit GitHub's documented response.
func (s *Server) checkResponse(method, path string, rt route, status int, payload []byte) {
	sch := s.spec.responseSchema(rt.op, status)
	if sch == nil {
		return
	}
	x, err := decodeJSON(payload)
	if err == nil {
		v := &validator{sp: s.spec, shape: true}
		if violations := v.validate(x, sch, "response"); len(violations) > 0 {
			err = fmt.Errorf("%s", strings.Join(violations, "\n\t"))
		}
	}
	if err != nil {
		s.t.Errorf("githubtest: the fake's %d answer to %s %s does not fit GitHub's %s %s response schema (a bug in githubtest):\n\t%v",
			status, method, path, method, rt.template, err)
	}
}

func errorReply(status int, message string) (int, http.Header, []byte) {
	b, _ := json.Marshal(errorBody(message))
	return status, http.Header{"Content-Type": {"application/json; charset=utf-8"}}, b
}

// errorBody is GitHub's error object. Only message and documentation_url: some operations document a closed
// error schema without the status field basic-error has.
func errorBody(message string) map[string]any {
	return map[string]any{
		"message":           message,
		"documentation_url": "https://docs.github.com/rest",
	}
}

// call is one validated request handed to a handler, with the response headers it may set.
type call struct {
	s       *Server
	rt      route
	path    string
	query   url.Values
	body    []byte
	decoded any
	header  http.Header
}

// reply is a handler's answer; body is marshalled to JSON unless nil.
type reply struct {
	status int
	body   any
}

type handler func(c *call) reply

func (c *call) param(name string) string { return c.rt.params[name] }

// intParam returns an integer path parameter (validated as an integer before the handler runs).
func (c *call) intParam(name string) int64 {
	n, _ := strconv.ParseInt(c.rt.params[name], 10, 64)
	return n
}

// decode unmarshals the (validated) JSON body into v.
func (c *call) decode(v any) error {
	if len(bytes.TrimSpace(c.body)) == 0 {
		return nil
	}
	return json.Unmarshal(c.body, v)
}

func notFound() reply { return reply{http.StatusNotFound, errorBody("Not Found")} }

func failed(status int, message string) reply { return reply{status, errorBody(message)} }
