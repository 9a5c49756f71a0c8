package bot

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/bot/internal/gittest"
	"github.com/catalogbot/catalogbot/bot/queue"
	"github.com/catalogbot/catalogbot/internal/githubtest"
	goldenpkg "github.com/catalogbot/catalogbot/internal/golden"
	"github.com/catalogbot/catalogbot/internal/pgtest"
	"github.com/catalogbot/catalogbot/internal/registrytest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

const (
	testSecret     = "whsec-test-4d1f0c2e9b"
	statusToken    = "status-token-7a3e5c1d90"
	repoFull       = "octo/catalog"
	installationID = 42
	appID          = 7
	publicURL      = "http://catalogbot.test"
)

// appKey is the test GitHub App's private key (generated once per test binary).
var appKey = sync.OnceValue(func() []byte {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
})

// blocker holds registry requests while blocking is on, to stop a pipeline run in its images stage.
type blocker struct {
	mu       sync.Mutex
	blocking bool
	release  chan struct{}
	arrived  chan struct{}
}

func newBlocker() *blocker {
	return &blocker{release: make(chan struct{}), arrived: make(chan struct{}, 1)}
}

func (b *blocker) block() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.blocking, b.release = true, make(chan struct{})
}

func (b *blocker) unblock() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.blocking {
		b.blocking = false
		close(b.release)
	}
}

func (b *blocker) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		on, rel := b.blocking, b.release
		b.mu.Unlock()
		if on && r.URL.Path != "/v2/" {
			select {
			case b.arrived <- struct{}{}:
			default:
			}
			select {
			case <-rel:
			case <-r.Context().Done():
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// syncBuffer is a log sink safe for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// harness is one end-to-end world: a fake GitHub validating every request against GitHub's OpenAPI
// description, a git repository standing in for GitHub's git service, a registry, and the bot serving
// its real HTTP handler.
type harness struct {
	t      *testing.T
	gh     *githubtest.Server
	git    *gittest.Repo
	reg    *registrytest.Registry
	block  *blocker
	dbPath string // the queue database: a SQLite path, or a PostgreSQL URL (withPostgres)
	cfg    *Config
	logs   *syncBuffer

	q      *queue.Queue
	bot    *Bot
	srv    *httptest.Server
	stop   context.CancelFunc
	done   chan error
	labels map[string]string // SHA → label, for goldens
	mu     sync.Mutex
	// serveOpts are handed to every bot the harness starts (a bundle image pusher, say).
	serveOpts []ServeOption
}

type harnessOption func(*harness)

// withPostgres runs the harness's bots on a fresh PostgreSQL database (dbPath becomes its URL); the test
// is skipped without PostgreSQL unless CATALOGBOT_REQUIRE_POSTGRES=1.
func withPostgres(h *harness) { h.dbPath = pgtest.Start(h.t) }

func newHarness(t *testing.T, opts ...harnessOption) *harness {
	t.Helper()
	h := &harness{t: t, gh: githubtest.New(t), git: gittest.New(t), block: newBlocker(), logs: &syncBuffer{},
		dbPath: filepath.Join(t.TempDir(), "queue.db"), labels: map[string]string{}}
	h.reg = registrytest.New(t, h.block.wrap)
	h.gh.AddRepo(repoFull)
	h.cfg = testConfig(h.gh.URL, filepath.Join(t.TempDir(), "git"))
	for _, o := range opts {
		o(h)
	}
	h.start()
	return h
}

// testConfig is the bot configuration of the end-to-end tests.
func testConfig(ghURL, cacheDir string) *Config {
	cfg := DefaultConfig()
	cfg.PublicURL = publicURL
	cfg.GitHub = GitHubConfig{APIURL: ghURL, AppID: appID, PrivateKeyFile: "unused"}
	cfg.Git.CacheDir = cacheDir
	cfg.Queue.Workers = 4
	cfg.Queue.Lease = 2 * time.Second
	cfg.Queue.MaxAttempts = 3
	cfg.Queue.ShutdownGrace = 0
	cfg.Checks.ProgressInterval = -1
	return cfg
}

// start runs a bot on the harness's database (again after restart).
func (h *harness) start() {
	t := h.t
	t.Helper()
	b, q, err := buildBot(h.cfg, h.dbPath, h.gh.URL, h.git.Dir, h.logs, h.serveOpts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	srv := httptest.NewServer(b.Handler())
	h.q, h.bot, h.srv, h.stop, h.done = q, b, srv, cancel, done
	t.Cleanup(h.shutdown)
}

// buildBot wires a bot as serve does, against the fake GitHub at ghURL and the git remote at gitDir.
func buildBot(cfg *Config, dbPath, ghURL, gitDir string, logs io.Writer, extra ...ServeOption) (*Bot, *queue.Queue, error) {
	q, err := queue.Open(context.Background(), dbPath)
	if err != nil {
		return nil, nil, err
	}
	metrics := NewMetrics(q)
	clients, err := ghclient.New(ghclient.Config{APIURL: ghURL, AppID: appID, PrivateKey: appKey(), Observer: metrics,
		Backoff: 5 * time.Millisecond, MaxRateLimitWait: cfg.GitHub.MaxRateLimitWait})
	if err != nil {
		return nil, nil, err
	}
	o := Options{Config: cfg, Secrets: [][]byte{[]byte(testSecret)}, GitHub: clients, Queue: q,
		Logger: NewLogger(logs, slog.LevelDebug), Metrics: metrics, StatusToken: statusToken}
	for _, opt := range extra {
		opt(&o)
	}
	b, err := New(context.Background(), o)
	if err != nil {
		return nil, nil, err
	}
	b.git.URL = func(owner, name string) string { return gitDir }
	return b, q, nil
}

// shutdown stops the bot gracefully (idempotent).
func (h *harness) shutdown() {
	if h.stop == nil {
		return
	}
	h.srv.Close()
	h.stop()
	h.block.unblock()
	if err := <-h.done; err != nil {
		h.t.Errorf("bot: %v", err)
	}
	h.q.Close()
	h.stop = nil
}

// label names a SHA in goldens.
func (h *harness) label(sha, label string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.labels[sha] = label
	return sha
}

// bundleImage pushes a small reproducible image for pkg's bundle of version and returns its digest
// reference.
func (h *harness) bundleImage(pkg, version string) string {
	h.t.Helper()
	img, err := mutate.Config(mutate.MediaType(empty.Image, types.OCIManifestSchema1), v1.Config{Labels: map[string]string{
		"operators.operatorframework.io.bundle.package.v1": pkg, "version": version}})
	if err != nil {
		h.t.Fatal(err)
	}
	tag, err := name.NewTag(fmt.Sprintf("%s/ops/%s-bundle:v%s", h.reg.Host, pkg, version), name.Insecure)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := remote.Write(tag, img); err != nil {
		h.t.Fatal(err)
	}
	dig, _ := img.Digest()
	return tag.Context().Digest(dig.String()).String()
}

// fbc renders a package whose stable channel holds versions, each replacing the one before; image gives
// each bundle's image reference.
func fbc(pkg string, image func(version string) string, versions ...string) string {
	var b strings.Builder
	enc := func(v any) {
		data, _ := json.MarshalIndent(v, "", "  ")
		b.Write(data)
		b.WriteString("\n")
	}
	enc(map[string]any{"schema": "olm.package", "name": pkg, "defaultChannel": "stable"})
	var entries []map[string]string
	for i, v := range versions {
		e := map[string]string{"name": pkg + ".v" + v}
		if i > 0 {
			e["replaces"] = pkg + ".v" + versions[i-1]
		}
		entries = append(entries, e)
	}
	enc(map[string]any{"schema": "olm.channel", "name": "stable", "package": pkg, "entries": entries})
	for _, v := range versions {
		enc(map[string]any{"schema": "olm.bundle", "name": pkg + ".v" + v, "package": pkg, "image": image(v),
			"properties": []any{map[string]any{"type": "olm.package", "value": map[string]string{"packageName": pkg, "version": v}}}})
	}
	return b.String()
}

// catalogFiles renders packages (name → versions) as catalog/<pkg>/catalog.json with pushed images.
func (h *harness) catalogFiles(pkgs map[string][]string) map[string]string {
	out := map[string]string{}
	for pkg, versions := range pkgs {
		out["catalog/"+pkg+"/catalog.json"] = fbc(pkg, func(v string) string { return h.bundleImage(pkg, v) }, versions...)
	}
	return out
}

const repoConfig = `apiVersion: catalogbot.dev/v1alpha1
kind: Config
catalog:
  dir: catalog
  format: json
maintainers: [catalog-admin]
owners:
  foo-operator: [alice]
  bar-operator: [bob]
merge:
  method: squash
`

// seedMain commits the base revision (config + foo and bar at v0.1.0) on main and points GitHub's main
// at it.
func (h *harness) seedMain(config string) string {
	files := h.catalogFiles(map[string][]string{"foo-operator": {"0.1.0"}, "bar-operator": {"0.1.0"}})
	files[".catalogbot.yaml"] = config
	sha := h.label(h.git.Commit("main", "", "catalog-admin", "base", files), "MAIN")
	h.gh.SetRef(repoFull, "heads/main", sha)
	return sha
}

// releaseFoo commits foo-operator v0.2.0 on branch from parent, as author.
func (h *harness) releaseFoo(branch, parent, author string) string {
	return h.git.Commit(branch, parent, author, "foo-operator v0.2.0",
		h.catalogFiles(map[string][]string{"foo-operator": {"0.1.0", "0.2.0"}}))
}

// aliceReleasesFoo seeds main with config, opens alice's pull request n releasing foo on it, delivers its
// opened event and waits for the check; it returns main's and the pull request head's commits.
func (h *harness) aliceReleasesFoo(n int, config string) (main, head string) {
	main = h.seedMain(config)
	head = h.releaseFoo("alice/foo", main, "alice")
	h.openPR(n, "alice", head, main)
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(n, "alice", head, main, nil))
	h.waitIdle()
	return main, head
}

// openPR seeds pull request n on GitHub and its refs/pull/n/head in git.
func (h *harness) openPR(n int, author, head, base string, labels ...string) {
	h.gh.AddPullRequest(repoFull, githubtest.PullRequest{Number: n, User: author, HeadSHA: head, BaseSHA: base,
		HeadRef: fmt.Sprintf("%s/change-%d", author, n), Title: fmt.Sprintf("Change %d", n), Labels: labels})
	h.git.SetPull(n, head)
}

// payload loads a real webhook example and applies edits: dotted paths to values (maps are created as
// needed). The result is still the real payload, aimed at the harness's repository and commits.
func payload(t testing.TB, file string, edits map[string]any) []byte {
	t.Helper()
	return githubtest.Payload(t, file, edits)
}

// repoEdits aims a payload at the harness's repository and installation.
func repoEdits(extra map[string]any) map[string]any {
	e := map[string]any{
		"repository.full_name": repoFull, "repository.name": "catalog", "repository.owner.login": "octo",
		"repository.default_branch": "main", "installation.id": installationID,
	}
	for k, v := range extra {
		e[k] = v
	}
	return e
}

// prEdits aims a pull_request-shaped payload at pull request n.
func prEdits(n int, author, head, base string, extra map[string]any) map[string]any {
	e := repoEdits(map[string]any{
		"number": n, "pull_request.number": n, "pull_request.draft": false, "pull_request.state": "open",
		"pull_request.user.login": author, "pull_request.head.sha": head, "pull_request.base.sha": base,
		"pull_request.base.ref": "main", "sender.login": author,
	})
	for k, v := range extra {
		e[k] = v
	}
	return e
}

var deliveries struct {
	mu sync.Mutex
	n  int
}

// post sends a delivery to the bot's real handler; secret "" sends it unsigned.
func (h *harness) post(event, delivery string, body []byte, secret string) (int, string) {
	h.t.Helper()
	if delivery == "" {
		deliveries.mu.Lock()
		deliveries.n++
		delivery = fmt.Sprintf("00000000-0000-4000-8000-%012d", deliveries.n)
		deliveries.mu.Unlock()
	}
	req, err := http.NewRequest(http.MethodPost, h.srv.URL+"/webhook", bytes.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", delivery)
	if secret != "" {
		req.Header.Set("X-Hub-Signature-256", githubtest.Sign([]byte(secret), body))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(text))
}

// deliver posts a signed real payload and requires it to be accepted.
func (h *harness) deliver(event, file string, edits map[string]any) {
	h.t.Helper()
	status, text := h.post(event, "", payload(h.t, file, edits), testSecret)
	if status != http.StatusAccepted {
		h.t.Fatalf("%s delivery: %d %s", event, status, text)
	}
}

// waitIdle waits until no job is queued or running, and fails on failed jobs.
func (h *harness) waitIdle() {
	h.t.Helper()
	h.waitIdleFor(45 * time.Second)
}

// waitIdleFor is waitIdle waiting up to limit.
func (h *harness) waitIdleFor(limit time.Duration) {
	h.t.Helper()
	deadline := time.Now().Add(limit)
	quiet := 0
	for quiet < 3 {
		depth, err := h.q.Depth(context.Background())
		if err != nil {
			h.t.Fatal(err)
		}
		if depth[queue.Queued]+depth[queue.Running] == 0 {
			quiet++
		} else {
			quiet = 0
		}
		if time.Now().After(deadline) {
			jobs, _ := h.q.List(context.Background(), 20, queue.Queued, queue.Running)
			for _, j := range jobs {
				h.t.Logf("job %d %s %s attempts %d error %q", j.ID, j.Kind, j.State, j.Attempts, j.Error)
			}
			h.t.Fatalf("jobs still pending after %s: %v\nlogs:\n%s", limit, depth, h.logs.String())
		}
		time.Sleep(15 * time.Millisecond)
	}
	failed, _ := h.q.List(context.Background(), 20, queue.Failed)
	for _, j := range failed {
		h.t.Errorf("job %d (%s) failed: %s", j.ID, j.Kind, j.Error)
	}
}

// waitFor polls cond until it holds (10s).
func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	h.waitForWithin(10*time.Second, what, cond)
}

// waitForWithin is waitFor waiting up to limit.
func (h *harness) waitForWithin(limit time.Duration, what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s\nlogs:\n%s", what, h.logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// deadRegistry is a loopback address nothing listens on.
func deadRegistry(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

var (
	pageIDs    = regexp.MustCompile(`/runs/([0-9]+)-[0-9a-f]{32}\b`)
	mdDuration = regexp.MustCompile(`(?m)^(\| [^|]+ \| [^|]+ \| )(?:[0-9.]+(?:ns|µs|ms|s|m|h))+( \|)`)
	anyDigest  = regexp.MustCompile(`sha256:[0-9a-f]{64}`)
	holdTime   = regexp.MustCompile(`\b[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} UTC\b`)
)

// normalize makes text stable across runs: labelled SHAs, registry host, digests, durations.
func (h *harness) normalize(s string) string {
	h.mu.Lock()
	var pairs []string
	shas := make([]string, 0, len(h.labels))
	for sha := range h.labels {
		shas = append(shas, sha)
	}
	sort.Strings(shas)
	for _, sha := range shas {
		pairs = append(pairs, sha, "{"+h.labels[sha]+"}", sha[:12], "{"+h.labels[sha]+"}")
	}
	h.mu.Unlock()
	pairs = append(pairs, h.reg.Host, "REGISTRY", h.gh.URL, "GITHUB")
	s = strings.NewReplacer(pairs...).Replace(s)
	s = pageIDs.ReplaceAllString(s, "/runs/$1")
	s = mdDuration.ReplaceAllString(s, "${1}Xms${2}")
	s = holdTime.ReplaceAllString(s, "TIME")
	return anyDigest.ReplaceAllString(s, "sha256:DIGEST")
}

// transcript renders what the bot did on GitHub: the API requests in order, then the final check runs,
// comments, statuses and merge state of the given pull requests and commits.
func (h *harness) transcript(prs []int, statusSHAs ...string) string {
	for _, n := range prs {
		if pr := h.gh.PullRequest(repoFull, n); pr.MergeCommitSHA != "" {
			h.label(pr.MergeCommitSHA, fmt.Sprintf("MERGE-%d", n))
		}
	}
	var b strings.Builder
	b.WriteString("## requests\n")
	for _, r := range h.gh.Requests() {
		fmt.Fprintf(&b, "%s %s %d\n", r.Method, r.Path, r.Status)
	}
	b.WriteString("\n## check runs\n")
	for i, cr := range h.gh.CheckRuns(repoFull) {
		fmt.Fprintf(&b, "\n### check run %d: %s on %s: %s %s (%d updates)\n", i+1, cr.Name, cr.HeadSHA, cr.Status, cr.Conclusion, cr.Updates)
		fmt.Fprintf(&b, "details: %s\nexternal id: %s\ntitle: %s\n\n%s\n", cr.DetailsURL, cr.ExternalID, cr.Output.Title, cr.Output.Summary)
		for _, a := range cr.Output.Annotations {
			fmt.Fprintf(&b, "annotation %s %s:%d-%d %q: %s\n", a.AnnotationLevel, a.Path, a.StartLine, a.EndLine, a.Title, a.Message)
		}
	}
	for _, n := range prs {
		fmt.Fprintf(&b, "\n## pull request #%d\n", n)
		pr := h.gh.PullRequest(repoFull, n)
		fmt.Fprintf(&b, "state %s, merged %v, merged head %s, method %s, title %q, labels %v\n", pr.State, pr.Merged,
			orDash(pr.MergedHeadSHA), orDash(pr.MergeMethod), pr.CommitTitle, pr.Labels)
		for _, c := range h.gh.Comments(repoFull, n) {
			var reactions []string
			for _, r := range c.Reactions {
				reactions = append(reactions, r.User+":"+r.Content)
			}
			fmt.Fprintf(&b, "\n### comment by %s (%d edits, reactions %v)\n%s\n", c.User, c.Edits, reactions, c.Body)
		}
	}
	for _, sha := range statusSHAs {
		fmt.Fprintf(&b, "\n## statuses of %s\n", sha)
		for _, st := range h.gh.Statuses(repoFull, sha) {
			fmt.Fprintf(&b, "%s %s %q %s\n", st.Context, st.State, st.Description, st.TargetURL)
		}
	}
	return h.normalize(b.String())
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// golden compares got with testdata/golden/name.txt (-update rewrites it).
func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenpkg.Compare(t, filepath.Join("testdata", "golden", name+".txt"), got, *update)
}
