package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/bot/queue"
)

// A graceful shutdown in the middle of a check puts the job back in the queue; the next process checks
// the pull request with the same check run and merges it once.
func TestShutdownMidJobResumesAfterRestart(t *testing.T) {
	onEachBackend(t, testShutdownMidJobResumesAfterRestart)
}

// onEachBackend runs a test with the SQLite queue, then with PostgreSQL.
func onEachBackend(t *testing.T, test func(t *testing.T, opts ...harnessOption)) {
	t.Run("sqlite", func(t *testing.T) { test(t) })
	t.Run("postgres", func(t *testing.T) { test(t, withPostgres) })
}

func testShutdownMidJobResumesAfterRestart(t *testing.T, opts ...harnessOption) {
	h := newHarness(t, opts...)
	main := h.seedMain(repoConfig)
	head := h.label(h.releaseFoo("alice/foo", main, "alice"), "HEAD")
	h.openPR(1, "alice", head, main)
	h.block.block()
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(1, "alice", head, main, nil))
	<-h.block.arrived
	h.shutdown()
	jobs := h.jobsAfterStop()
	if len(jobs) != 1 || jobs[0].State != queue.Queued || jobs[0].Attempts != 0 {
		t.Fatalf("after shutdown: %+v, want one queued job with no attempt counted", jobs)
	}
	if runs := h.gh.CheckRuns(repoFull); len(runs) != 1 || runs[0].Status != "in_progress" {
		t.Fatalf("check runs after shutdown: %+v", runs)
	}
	h.start()
	h.waitIdle()
	assertCheckedAndMergedOnce(t, h, head)
	golden(t, "shutdown-resume", h.transcript([]int{1}))
}

func (h *harness) jobsAfterStop() []*queue.Job {
	h.t.Helper()
	q, err := queue.Open(context.Background(), h.dbPath)
	if err != nil {
		h.t.Fatal(err)
	}
	defer q.Close()
	jobs, err := q.List(context.Background(), 10)
	if err != nil {
		h.t.Fatal(err)
	}
	return jobs
}

func assertCheckedAndMergedOnce(t *testing.T, h *harness, head string) {
	t.Helper()
	runs := h.gh.CheckRuns(repoFull)
	if len(runs) != 1 || runs[0].Conclusion != "success" || runs[0].HeadSHA != head {
		t.Errorf("check runs: %+v, want one successful run on the head (reused across the restart)", runs)
	}
	merges := 0
	for _, r := range h.gh.Requests() {
		if r.Method == http.MethodPut && strings.HasSuffix(r.Path, "/merge") {
			merges++
		}
	}
	if merged, at := h.gh.Merged(repoFull, 1); !merged || at != head || merges != 1 {
		t.Errorf("merged %v at %s with %d merge requests, want one merge of the head", merged, at, merges)
	}
}

// childSpec tells a re-executed test binary how to run a bot.
type childSpec struct {
	GitHub, GitDir, DB, Cache, AddrFile string
}

const childEnv = "CATALOGBOT_BOT_CHILD"

// kill -9 in the middle of a check: nothing is recorded by the dying process. The next process requeues
// the job when its lease expires, reuses the check run the first one created, and merges once.
func TestKilledBotLosesNothing(t *testing.T) {
	if spec := os.Getenv(childEnv); spec != "" {
		runChild(spec)
		return
	}
	onEachBackend(t, testKilledBotLosesNothing)
}

func testKilledBotLosesNothing(t *testing.T, opts ...harnessOption) {
	h := newHarness(t, opts...)
	main := h.seedMain(repoConfig)
	head := h.label(h.releaseFoo("alice/foo", main, "alice"), "HEAD")
	h.openPR(1, "alice", head, main)
	h.shutdown() // the child owns the database now

	dir := t.TempDir()
	spec := childSpec{GitHub: h.gh.URL, GitDir: h.git.Dir, DB: h.dbPath, Cache: h.cfg.Git.CacheDir, AddrFile: filepath.Join(dir, "addr")}
	data, _ := json.Marshal(spec)
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledBotLosesNothing$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(data))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var addr string
	h.waitFor("the child bot to listen", func() bool {
		b, err := os.ReadFile(spec.AddrFile)
		addr = strings.TrimSpace(string(b))
		return err == nil && addr != ""
	})
	h.block.block()
	h.srv.URL = "http://" + addr
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(1, "alice", head, main, nil))
	<-h.block.arrived
	if runs := h.gh.CheckRuns(repoFull); len(runs) != 1 || runs[0].Status != "in_progress" {
		t.Fatalf("check runs before the kill: %+v", runs)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	h.block.unblock()
	start := time.Now()
	h.start()
	h.waitIdle()
	t.Logf("recovered in %s (lease %s)", time.Since(start).Round(time.Millisecond), h.cfg.Queue.Lease)
	assertCheckedAndMergedOnce(t, h, head)
	jobs, _ := h.q.List(context.Background(), 10, queue.Done)
	for _, j := range jobs {
		if j.Kind == kindCheck && j.Attempts != 2 {
			t.Errorf("check job done on attempt %d, want 2 (the killed one and the resumed one)", j.Attempts)
		}
	}
	golden(t, "kill9-resume", h.transcript([]int{1}))
}

// runChild is the killed process: a bot serving on a loopback port until SIGKILL.
func runChild(specJSON string) {
	var spec childSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	b, _, err := buildBot(testConfig(spec.GitHub, spec.Cache), spec.DB, spec.GitHub, spec.GitDir, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.Exit(3)
	}
	go func() { _ = b.Run(context.Background()) }()
	go func() { _ = http.Serve(ln, b.Handler()) }()
	if err := os.WriteFile(spec.AddrFile, []byte(ln.Addr().String()), 0o644); err != nil {
		os.Exit(3)
	}
	select {}
}
