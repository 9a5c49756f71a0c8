package bot

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/bot/checkrun"
	"github.com/catalogbot/catalogbot/bot/queue"
	"github.com/catalogbot/catalogbot/internal/githubtest"
)

// tarpit is a registry address that accepts TCP connections and never answers.
func tarpit(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// A pull request whose references config names a registry that accepts connections and never answers
// holds a worker no longer than the deadlines of bot.yaml's timeouts: each registry request's, the
// render stage's, or the job's. The check run fails as an infrastructure failure naming the host, the
// job ends (its heartbeat does not keep it alive), and the single worker goes on to the next pull request.
func TestAttackTarpitRegistry(t *testing.T) {
	for _, tc := range []struct {
		name     string
		timeouts TimeoutsConfig
		title    string
		summary  []string
	}{
		{"registry request", TimeoutsConfig{RegistryRequest: 300 * time.Millisecond, GitHubRequest: time.Minute, Stage: time.Hour, Job: time.Hour},
			"Infrastructure failure in render", []string{"did not answer within 300ms"}},
		{"stage", TimeoutsConfig{RegistryRequest: time.Hour, GitHubRequest: time.Minute, Stage: 2 * time.Second, Job: time.Hour},
			"Infrastructure failure in render", []string{"the render stage did not finish within its 2s deadline"}},
		{"job", TimeoutsConfig{RegistryRequest: time.Hour, GitHubRequest: time.Minute, Stage: time.Hour, Job: 3 * time.Second},
			checkrun.DeadlineTitle, []string{"ran past its deadline"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(h *harness) { h.cfg.Timeouts = tc.timeouts; h.cfg.Queue.Workers = 1 })
			pit := tarpit(t)
			main := h.seedMain(repoConfig + "references:\n  file: catalog.yaml\n")
			refs := "name: catalog\nrepo: " + h.reg.Host + "/ops/catalog\ntag: latest\nreferences:\n" +
				"- name: foo-operator\n  image: " + pit + "/ops/foo-operator-bundle:v0.2.0\n"
			head := h.label(h.git.Commit("admin/tarpit", main, "catalog-admin", "render foo from a registry", map[string]string{"catalog.yaml": refs}), "HEAD")
			h.openPR(1, "catalog-admin", head, main)
			start := time.Now()
			h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(1, "catalog-admin", head, main, nil))
			// The next pull request is checked by the same (only) worker once the tarpit lets go of it.
			other := h.label(h.releaseFoo("alice/foo", main, "alice"), "OTHER")
			h.openPR(2, "alice", other, main)
			h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(2, "alice", other, main, nil))

			var pitRun, otherRun string
			deadline := time.Now().Add(40 * time.Second)
			for pitRun == "" || otherRun == "" {
				if time.Now().After(deadline) {
					t.Fatalf("check runs after 40s: %+v\nlogs:\n%s", h.gh.CheckRuns(repoFull), h.logs.String())
				}
				time.Sleep(20 * time.Millisecond)
				for _, cr := range h.gh.CheckRuns(repoFull) {
					if cr.Status != "completed" {
						continue
					}
					switch cr.HeadSHA {
					case head:
						pitRun = cr.Conclusion + " | " + cr.Output.Title + " | " + cr.Output.Summary
					case other:
						otherRun = cr.Conclusion
					}
				}
			}
			t.Logf("the tarpit's check completed in %s", time.Since(start).Round(time.Millisecond))
			if !strings.HasPrefix(pitRun, "failure | "+tc.title) {
				t.Errorf("the tarpit's check run: %.600s\nwant a failure titled %q", pitRun, tc.title)
			}
			for _, want := range append(tc.summary, pit) {
				if tc.name == "job" && want == pit {
					continue // stopped from outside the pipeline: the host is in the job's log, not the report
				}
				if !strings.Contains(pitRun, want) {
					t.Errorf("the tarpit's check run does not say %q:\n%.3000s", want, pitRun)
				}
			}
			if otherRun != "success" {
				t.Errorf("the next pull request's check: %s", otherRun)
			}
			h.waitFor("the jobs to settle", func() bool {
				depth, err := h.q.Depth(t.Context())
				return err == nil && depth[queue.Queued]+depth[queue.Running] == 0
			})
			first, err := h.q.Get(t.Context(), 1)
			if err != nil {
				t.Fatal(err)
			}
			want := queue.Done
			if tc.name == "job" {
				want = queue.Failed
			}
			if first.Kind != kindCheck || first.State != want || first.Attempts != 1 {
				t.Errorf("the tarpit's check job: %s %s after %d attempts (%s), want %s after 1", first.Kind, first.State, first.Attempts, first.Error, want)
			}
		})
	}
}

// TestAttackRegistryTarpitBounded: eight pull requests whose references name a registry that accepts
// connections and never answers, and one honest pull request among them, checked by eight workers with
// bot.yaml's default timeouts. A tarpit costs a check at most 60 s in all (the answer's headers are
// awaited registry.ResponseHeaderTimeout, a timeout is not retried, and once a request to the host timed
// out the job's later requests to it, whatever the stage, fail at once): its check run is an
// infrastructure failure naming the host. The honest check finishes within its time alone plus 10 s with
// the default timeouts, delivered among the tarpits or after all eight (waiting for a worker). (Before: each request waited its 2-minute deadline and was
// retried; a tarpit held a worker past 150 s.)
func TestAttackRegistryTarpitBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the default response-header timeout")
	}
	for _, tc := range []struct {
		name        string
		headers     time.Duration // timeouts.registryResponseHeader; 0: the default
		honestAfter int           // the honest pull request is delivered after this many tarpit ones
	}{
		{"default timeouts, honest among the tarpits", 0, 4},
		{"default timeouts, honest after all tarpits", 0, 8},
	} {
		t.Run(tc.name, func(t *testing.T) { tarpitBounded(t, tc.headers, tc.honestAfter) })
	}
}

func tarpitBounded(t *testing.T, headers time.Duration, honestAfter int) {
	h := newHarness(t, func(h *harness) {
		h.cfg.Queue.Workers = 8
		if headers > 0 {
			h.cfg.Timeouts.RegistryResponseHeader = headers
		}
	})
	pit := tarpit(t)
	main := h.seedMain(repoConfig + "references:\n  file: catalog.yaml\n")

	completed := func(sha string) *githubtest.CheckRun {
		for _, cr := range h.gh.CheckRuns(repoFull) {
			if cr.HeadSHA == sha && cr.Status == "completed" {
				return &cr
			}
		}
		return nil
	}
	// waitCompleted returns how long after start each check run of shas completed.
	waitCompleted := func(start time.Time, shas []string, limit time.Duration) map[string]time.Duration {
		took := map[string]time.Duration{}
		for len(took) < len(shas) {
			if time.Since(start) > limit {
				t.Fatalf("%d of %d check runs completed after %s: %v\nlogs:\n%.20000s", len(took), len(shas), limit, took, h.logs.String())
			}
			time.Sleep(20 * time.Millisecond)
			for _, sha := range shas {
				if _, ok := took[sha]; !ok && completed(sha) != nil {
					took[sha] = time.Since(start)
				}
			}
		}
		return took
	}

	// The honest check's usual time: alone, on the same bot. Held, so nothing merges (main stays where
	// the git repository has it).
	alone := h.label(h.releaseFoo("alice/alone", main, "alice"), "ALONE")
	h.openPR(100, "alice", alone, main, "do-not-merge/hold")
	start := time.Now()
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(100, "alice", alone, main, nil))
	usual := waitCompleted(start, []string{alone}, 60*time.Second)[alone]
	if cr := completed(alone); cr.Conclusion != "success" {
		t.Fatalf("the honest check alone: %s %s\n%.3000s\nlogs:\n%.20000s", cr.Conclusion, cr.Output.Title, cr.Output.Summary, h.logs.String())
	}

	honest := h.label(h.git.Commit("bob/bar", main, "bob", "bar-operator v0.2.0",
		h.catalogFiles(map[string][]string{"bar-operator": {"0.1.0", "0.2.0"}})), "HONEST")
	h.openPR(9, "bob", honest, main, "do-not-merge/hold")
	var pits []string
	start = time.Now()
	for n := 1; n <= 8; n++ {
		refs := fmt.Sprintf("name: catalog\nrepo: %s/ops/catalog\ntag: latest\nreferences:\n- name: foo-operator\n  image: %s/ops/foo-operator-bundle:v0.%d.0\n",
			h.reg.Host, pit, n+1)
		head := h.label(h.git.Commit(fmt.Sprintf("admin/pit-%d", n), main, "catalog-admin", "render foo from a registry",
			map[string]string{"catalog.yaml": refs}), fmt.Sprintf("PIT%d", n))
		h.openPR(n, "catalog-admin", head, main)
		h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(n, "catalog-admin", head, main, nil))
		pits = append(pits, head)
		if n == honestAfter {
			h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(9, "bob", honest, main, nil))
		}
	}
	took := waitCompleted(start, append([]string{honest}, pits...), 90*time.Second)
	slowest := time.Duration(0)
	for _, sha := range pits {
		slowest = max(slowest, took[sha])
	}
	t.Logf("honest check alone %s, among 8 tarpits %s; slowest tarpit check %s", usual.Round(time.Millisecond),
		took[honest].Round(time.Millisecond), slowest.Round(time.Millisecond))
	if took[honest] > usual+10*time.Second {
		t.Errorf("the honest check took %s among the tarpits, %s alone: delayed by more than 10s", took[honest], usual)
	}
	if cr := completed(honest); cr.Conclusion != "success" {
		t.Errorf("the honest check: %s %s", cr.Conclusion, cr.Output.Title)
	}
	for _, sha := range pits {
		if took[sha] > 60*time.Second {
			t.Errorf("tarpit check %s completed after %s, want at most 60s", h.labels[sha], took[sha])
		}
		cr := completed(sha)
		if cr.Conclusion != "failure" || !strings.HasPrefix(cr.Output.Title, "Infrastructure failure in") ||
			!strings.Contains(cr.Output.Summary+cr.Output.Text, pit) {
			t.Errorf("tarpit check %s: %s %q, want an infrastructure failure naming %s:\n%.3000s", h.labels[sha],
				cr.Conclusion, cr.Output.Title, pit, cr.Output.Summary)
		}
	}
}
