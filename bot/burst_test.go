package bot

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/bot/checkrun"
	"github.com/catalogbot/catalogbot/bot/queue"
	"github.com/catalogbot/catalogbot/bot/store"
	"github.com/catalogbot/catalogbot/internal/githubtest"
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s)-1) * p)
	return s[i]
}

// A burst of signed deliveries on loopback: every delivery is answered fast, queued once, and every pull
// request is checked once its burst settles (no lost or duplicated jobs). A small burst runs with the
// tests; bench/webhooks.sh runs 500 (CATALOGBOT_BENCH_WEBHOOKS=1) and prints the measurements. The queue
// is SQLite, or PostgreSQL with CATALOGBOT_BENCH_QUEUE=postgres (TestWebhookBurstPostgres).
func TestWebhookBurst(t *testing.T) {
	n, prs, workers := 60, 12, 4
	if os.Getenv("CATALOGBOT_BENCH_WEBHOOKS") == "1" {
		n, prs, workers = envInt("CATALOGBOT_BENCH_N", 500), envInt("CATALOGBOT_BENCH_PRS", 100), envInt("CATALOGBOT_BENCH_WORKERS", 8)
	}
	opts := []harnessOption{func(h *harness) { h.cfg.Queue.Workers = workers; h.logs = &syncBuffer{} }}
	switch backend := os.Getenv("CATALOGBOT_BENCH_QUEUE"); backend {
	case "", "sqlite":
	case "postgres":
		opts = append(opts, withPostgres)
	default:
		t.Fatalf("CATALOGBOT_BENCH_QUEUE=%q: want sqlite or postgres", backend)
	}
	h := newHarness(t, opts...)
	main := h.seedMain(repoConfig + "  requiredLabels: [lgtm]\n") // no merges: measure checks
	head := h.label(h.releaseFoo("alice/foo", main, "alice"), "HEAD")
	for i := 1; i <= prs; i++ {
		h.openPR(i, "alice", head, main)
	}
	bodies := make([][]byte, n)
	events := make([]int, n) // the pull request of each delivery
	for i := range n {
		pr := i%prs + 1
		file := "pull_request/synchronize.payload.json"
		if i < prs {
			file = "pull_request/opened.payload.json"
		}
		bodies[i] = payload(t, file, prEdits(pr, "alice", head, main, nil))
		events[i] = pr
	}
	latencies := make([]time.Duration, n)
	firstSent := make([]time.Time, prs+1)
	var mu sync.Mutex
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	start := time.Now()
	var wg sync.WaitGroup
	next := make(chan int)
	for range 32 {
		wg.Go(func() {
			for i := range next {
				req, _ := http.NewRequest(http.MethodPost, h.srv.URL+"/webhook", strings.NewReader(string(bodies[i])))
				req.Header.Set("X-GitHub-Event", "pull_request")
				req.Header.Set("X-GitHub-Delivery", fmt.Sprintf("burst-%d", i))
				req.Header.Set("X-Hub-Signature-256", signed(bodies[i]))
				sent := time.Now()
				mu.Lock()
				if firstSent[events[i]].IsZero() || sent.Before(firstSent[events[i]]) {
					firstSent[events[i]] = sent
				}
				mu.Unlock()
				resp, err := client.Do(req)
				if err != nil {
					t.Error(err)
					continue
				}
				resp.Body.Close()
				latencies[i] = time.Since(sent)
				if resp.StatusCode != http.StatusAccepted {
					t.Errorf("delivery %d: %d", i, resp.StatusCode)
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	answered := time.Since(start)
	h.waitIdle()
	settled := time.Since(start)

	ctx := context.Background()
	jobs, err := h.q.List(ctx, 100000)
	if err != nil {
		t.Fatal(err)
	}
	deliveries := map[string]int{}
	executed := 0
	var states = map[queue.State]int{}
	for _, j := range jobs {
		if strings.HasPrefix(j.Delivery, "burst-") {
			deliveries[j.Delivery]++
		}
		states[j.State]++
		if j.State == queue.Done {
			executed++
		}
	}
	if len(deliveries) != n {
		t.Errorf("%d of %d deliveries became jobs", len(deliveries), n)
	}
	for d, c := range deliveries {
		if c != 1 {
			t.Errorf("delivery %s became %d jobs", d, c)
		}
	}
	// Every pull request ends with a completed check of its head. Time to in progress is from its first
	// delivery to the arrival, at (fake) GitHub, of the request that created its first check run.
	runs, err := h.bot.store.RecentRuns(ctx, 100000)
	if err != nil {
		t.Fatal(err)
	}
	prOfRun := map[string]int{}
	completed := map[int]bool{}
	others := map[int][]string{} // the runs of a pull request that did not succeed, for the failure message
	for _, r := range runs {
		if r.Kind != kindCheck {
			continue
		}
		prOfRun[checkrun.ExternalID(r.ID)] = r.PR
		if r.Status == store.RunCompleted && r.Conclusion == "success" {
			completed[r.PR] = true
		} else {
			why := lastLines(r.Log, 5)
			if r.Report != nil {
				for _, st := range r.Report.Stages {
					if st.Err != "" {
						why += "\n" + st.Name + ": " + st.Err
					}
				}
			}
			others[r.PR] = append(others[r.PR], fmt.Sprintf("run %d head %.7s: %s %s %q", r.ID, r.HeadSHA, r.Status, r.Conclusion, why))
		}
	}
	firstRun := map[int]time.Time{}
	for _, cr := range h.gh.CheckRuns(repoFull) {
		pr, ok := prOfRun[cr.ExternalID]
		if !ok {
			t.Errorf("check run %d has external ID %q, not one of a run", cr.ID, cr.ExternalID)
			continue
		}
		if f, ok := firstRun[pr]; !ok || cr.Received.Before(f) {
			firstRun[pr] = cr.Received
		}
	}
	var toProgress []time.Duration
	for pr := 1; pr <= prs; pr++ {
		if !completed[pr] {
			t.Errorf("pull request %d has no completed check; its other runs: %s", pr, strings.Join(others[pr], "; "))
		}
		if firstRun[pr].IsZero() {
			t.Errorf("pull request %d has no check run", pr)
			continue
		}
		toProgress = append(toProgress, firstRun[pr].Sub(firstSent[pr]))
	}
	summary := fmt.Sprintf("deliveries %d over %d pull requests, %d workers\n"+
		"webhook latency p50 %s p99 %s max %s; all answered in %s (%.0f deliveries/s)\n"+
		"time to check run in_progress p50 %s p99 %s\n"+
		"jobs: %d executed (%d done), %d superseded, %d failed; settled in %s (%.1f executed jobs/s)\n",
		n, prs, workers, percentile(latencies, .5).Round(time.Microsecond), percentile(latencies, .99).Round(time.Microsecond),
		percentile(latencies, 1).Round(time.Microsecond), answered.Round(time.Millisecond), float64(n)/answered.Seconds(),
		percentile(toProgress, .5).Round(time.Millisecond), percentile(toProgress, .99).Round(time.Millisecond),
		executed, states[queue.Done], states[queue.Superseded], states[queue.Failed], settled.Round(time.Millisecond),
		float64(executed)/settled.Seconds())
	t.Log("\n" + summary)
	if out := os.Getenv("CATALOGBOT_BENCH_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(summary), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Latencies are reported, not asserted: a timed assertion fails on a loaded machine and proves nothing
	// on a quiet one. bench/webhooks.sh prints them; what this test asserts is that nothing is lost.
}

func signed(body []byte) string { return githubtest.Sign([]byte(testSecret), body) }

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
