package statuspage

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/bot/queue"
	"github.com/catalogbot/catalogbot/bot/store"
)

// fakeQueue is an empty queue that has forgotten every job.
type fakeQueue struct{}

func (fakeQueue) Depth(context.Context) (map[queue.State]int, error) {
	return map[queue.State]int{}, nil
}
func (fakeQueue) List(context.Context, int, ...queue.State) ([]*queue.Job, error) {
	return nil, nil
}
func (fakeQueue) Get(_ context.Context, id int64) (*queue.Job, error) {
	return nil, errors.New("job pruned")
}

// fakeRecords holds runs by number, a release and a promotion.
type fakeRecords map[int64]*store.Run

func (f fakeRecords) RecentRuns(context.Context, int) ([]*store.Run, error) {
	return []*store.Run{f[2], f[1]}, nil
}
func (f fakeRecords) RunByID(_ context.Context, id int64) (*store.Run, error) { return f[id], nil }
func (f fakeRecords) CheckRunID(_ context.Context, runID int64) (int64, error) {
	return 1000 + runID, nil
}
func (f fakeRecords) RecentReleases(context.Context, int) ([]*store.Release, error) {
	return []*store.Release{{AppPR: store.AppPR{Repo: "octo/private", Dir: "operators/foo/0.1.0", State: "opened", PR: 7}, Image: "quay.io/o/foo:0.1.0"}}, nil
}
func (f fakeRecords) RecentPromotions(context.Context, int) ([]*store.Promotion, error) {
	return []*store.Promotion{{AppPR: store.AppPR{Repo: "octo/private", Dir: "foo", State: "failed", Error: "no ci.yaml"}, Catalog: "v4.21", Strategy: "always"}}, nil
}

// The package's own rules, without the bot: a run page shows without the token only through its page ID
// and only for a public repository; everything else anonymous is a 401 naming nothing (a wrong page ID a
// 404); with the token every page shows, read from Queue and Records.
func TestPagesWhoMayRead(t *testing.T) {
	records := fakeRecords{
		1: {ID: 1, JobID: 11, Kind: "check", Repo: "octo/private", PR: 4, HeadSHA: "abc", Status: "completed", Started: time.Now()},
		2: {ID: 2, JobID: 12, Kind: "check", Repo: "open/catalog", PR: 5, HeadSHA: "def", Status: "completed", Started: time.Now()},
	}
	p := New(Options{Queue: fakeQueue{}, Records: records, Key: []byte(strings.Repeat("k", 32)), Token: statusToken, Public: []string{"open/*"}})
	mux := http.NewServeMux()
	p.Mount(mux)
	get := func(path string, authed bool) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		if authed {
			req.Header.Set("Authorization", "Bearer "+statusToken)
		}
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, req)
		return w
	}
	wrongMAC := p.RunPath(2)[:len(p.RunPath(2))-1] + "x"
	for _, tc := range []struct {
		path   string
		authed bool
		code   int
		want   string
	}{
		{p.RunPath(2), false, http.StatusOK, "Run #2: check of open/catalog#5"},
		{p.RunPath(1), false, http.StatusUnauthorized, "authentication required"},
		{"/runs/2", false, http.StatusUnauthorized, "authentication required"},
		{p.RunPath(3), false, http.StatusUnauthorized, "authentication required"},
		{wrongMAC, false, http.StatusNotFound, "no such page"},
		{"/", false, http.StatusUnauthorized, "authentication required"},
		{"/runs/1", true, http.StatusOK, "check run 1001"},
		{p.RunPath(1), true, http.StatusOK, "Run #1: check of octo/private#4"},
		{"/runs/3", true, http.StatusNotFound, "404 page not found"},
		{wrongMAC, true, http.StatusNotFound, "404 page not found"},
		{"/", true, http.StatusOK, `<a href="/runs/1">#1</a>`},
	} {
		w := get(tc.path, tc.authed)
		body := w.Body.String()
		if w.Code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("%s (token %v): %d %q, want %d with %q", tc.path, tc.authed, w.Code, body, tc.code, tc.want)
		}
		if !tc.authed && w.Code != http.StatusOK && (strings.Contains(body, "octo") || strings.Contains(body, "open/")) {
			t.Errorf("%s: the refusal names a repository: %q", tc.path, body)
		}
	}
	if w := get(p.RunPath(2), false); w.Header().Get("Cache-Control") != "private, no-store" || w.Header().Get("Referrer-Policy") != "no-referrer" ||
		w.Header().Get("Content-Security-Policy") != "default-src 'none'; style-src 'unsafe-inline'" {
		t.Errorf("run page headers: %v", w.Header())
	}
	index := get("/", true).Body.String()
	for _, want := range []string{"open/catalog", "operators/foo/0.1.0", "quay.io/o/foo:0.1.0", "<code>v4.21</code>", "no ci.yaml"} {
		if !strings.Contains(index, want) {
			t.Errorf("/ lacks %q", want)
		}
	}
}
