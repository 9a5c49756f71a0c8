package checkrun

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/catalogbot/catalogbot/bot/checkrun/internal/checksapi"
	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/bot/queue"
	"github.com/catalogbot/catalogbot/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// fakeRun is a check run as the fake GitHub holds it.
type fakeRun struct {
	id                  int64
	sha, name, external string
	status, conclusion  string
	title, summary      string
	annotations         int
}

// fakeGitHub is the Checks API in memory (the owners of newOwner take it for the client's: fakeChecks);
// no other call of the GitHub it stands for answers. fail, when set, may answer a request with an error
// instead (before it takes effect, or after it: an answer lost on the way back).
type fakeGitHub struct {
	ghclient.GitHub
	mu       sync.Mutex
	runs     []*fakeRun
	requests []string
	fail     func(op string, n int) (err error, after bool)
	calls    map[string]int
}

func (f *fakeGitHub) failure(op string) (error, bool) {
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[op]++
	f.requests = append(f.requests, op)
	if f.fail == nil {
		return nil, false
	}
	return f.fail(op, f.calls[op])
}

func (f *fakeGitHub) CreateCheckRun(_ context.Context, _ ghclient.Repo, cr checksapi.CheckRun) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	err, after := f.failure("create")
	if err != nil && !after {
		return 0, err
	}
	r := &fakeRun{id: int64(len(f.runs) + 1), sha: cr.HeadSHA, name: cr.Name, external: cr.ExternalID, status: cr.Status,
		title: cr.Title, summary: cr.Summary}
	f.runs = append(f.runs, r)
	if err != nil {
		return 0, err
	}
	return r.id, nil
}

func (f *fakeGitHub) UpdateCheckRun(_ context.Context, _ ghclient.Repo, id int64, cr checksapi.CheckRun) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	err, after := f.failure("update")
	if err != nil && !after {
		return err
	}
	if id <= 0 || id > int64(len(f.runs)) {
		return fmt.Errorf("update check run %d: 404", id)
	}
	r := f.runs[id-1]
	if cr.Conclusion != "" {
		r.status, r.conclusion = "completed", cr.Conclusion
	} else if cr.Status != "" {
		r.status, r.conclusion = cr.Status, ""
	}
	if cr.Title != "" {
		r.title, r.summary = cr.Title, cr.Summary
	}
	r.annotations += len(cr.Annotations)
	return err
}

func (f *fakeGitHub) FindCheckRun(_ context.Context, _ ghclient.Repo, sha, name, external string) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err, _ := f.failure("find"); err != nil {
		return 0, err
	}
	for i := len(f.runs) - 1; i >= 0; i-- {
		if r := f.runs[i]; r.sha == sha && r.name == name && r.external == external {
			return r.id, nil
		}
	}
	return 0, nil
}

// fakeChecks is the Checks API of a test's fake GitHub (a fakeGitHub, or one wrapping it).
func fakeChecks(gh ghclient.GitHub) (checksapi.API, error) {
	api, ok := gh.(checksapi.API)
	if !ok {
		return nil, fmt.Errorf("%T is not a fake of the Checks API", gh)
	}
	return api, nil
}

// only returns the one check run there is.
func (f *fakeGitHub) only(t *testing.T) fakeRun {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.runs) != 1 {
		t.Fatalf("%d check runs, want 1 (requests %v)", len(f.runs), f.requests)
	}
	return *f.runs[0]
}

func (f *fakeGitHub) count(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

// errServer is a GitHub 5xx or 429 as the client returns it.
var errServer = errors.New("GitHub answered 502 Bad Gateway")
var errRateLimited = errors.New("GitHub answered 429 Too Many Requests")

// backends are the store's database engines.
var backends = []struct {
	name  string
	fresh func(t *testing.T) string
}{
	{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "queue.db") }},
	{"postgres", func(t *testing.T) string { return pgtest.Start(t) }},
}

// forEachBackend runs test with a fresh owner on each backend; newOwner opens another owner (another
// replica) on the same database.
func forEachBackend(t *testing.T, test func(t *testing.T, o *Owner, newOwner func() *Owner)) {
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			dsn := bk.fresh(t)
			newOwner := func() *Owner {
				q, err := queue.Open(t.Context(), dsn)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { q.Close() })
				o, err := New(t.Context(), q.DB(), "catalogbot", 0)
				if err != nil {
					t.Fatal(err)
				}
				o.checks = fakeChecks
				return o
			}
			test(t, newOwner(), newOwner)
		})
	}
}

var repo = ghclient.Repo{Owner: "octo", Name: "catalog"}

func ref(run int64, attempt int) Ref {
	return Ref{Run: run, Repo: repo, HeadSHA: "1111111111111111111111111111111111111111", DetailsURL: "http://bot/runs/x", Attempt: attempt}
}
