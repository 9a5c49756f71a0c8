// Package bot is `catalogbot serve`: a GitHub App that receives webhooks, queues them durably, runs the
// pull-request pipeline on each pull request's head, reports a check run and one readiness comment,
// merges what passes with the head SHA guard, and republishes the catalog image after pushes to the
// default branch. It also serves /healthz, /readyz, /metrics and a status page.
package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/catalogbot/catalogbot/bot/checkrun"
	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/bot/gitcache"
	"github.com/catalogbot/catalogbot/bot/queue"
	"github.com/catalogbot/catalogbot/bot/statuspage"
	"github.com/catalogbot/catalogbot/bot/store"
	"github.com/catalogbot/catalogbot/registry"
)

// Clients hands out a GitHub client for an installation (ghclient.Clients implements it).
type Clients interface {
	For(installationID int64) (ghclient.GitHub, error)
}

// Options are a Bot's dependencies. Config, Secrets, GitHub and Queue are required.
type Options struct {
	Config *Config
	// Secrets are the webhook secrets (at least one, none empty).
	Secrets [][]byte
	GitHub  Clients
	Queue   *queue.Queue
	// Git is the clone cache (default: Config.Git.CacheDir with Config.GitURL).
	Git    *gitcache.Cache
	Logger *slog.Logger
	// Metrics, when nil, are created (on their own registry). Pass them when the GitHub clients report to
	// them too.
	Metrics *Metrics
	// RemoteOptions are used for every registry request of the pipeline and of publishing, after the
	// bot's own transport (the job's: Config.Timeouts.RegistryRequest as each request's deadline and a
	// registry.Breaker per job), and before the job's repository's credentials (Config.Registries; never
	// the host's docker config).
	RemoteOptions []remote.Option
	// StatusToken opens the status pages and /metrics (default: read as Config.Status says).
	StatusToken string
	// BundlePusher builds and pushes the bundle images of merged bundle directories; nil: the App
	// releases nothing (pushes to the default branch are only published).
	BundlePusher BundlePusher
}

// Bot is a configured bot; Handler serves HTTP, Run executes jobs.
type Bot struct {
	cfg     *Config
	secrets [][]byte
	gh      Clients
	queue   *queue.Queue
	pool    *queue.Pool
	store   *store.Store
	git     *gitcache.Cache
	log     *slog.Logger
	metrics *Metrics
	remote  []remote.Option // Options.RemoteOptions
	// pages are the status pages (bot/statuspage).
	pages *statuspage.Pages
	// registries are the registry logins of bot.yaml; a job uses only its repository's (keychainFor).
	registries []registryLogin
	// checks is the only writer of check runs.
	checks *checkrun.Owner
	// announcer creates check runs at enqueue time.
	announcer *announcer
	// inflight bounds the webhook body bytes held at once.
	inflight *byteBudget
	// smokeSlots bounds the smoke installs running at once.
	smokeSlots chan struct{}
	kindConfig string // bot.yaml's smoke.kindConfig, read at start
	pusher     BundlePusher
}

// NewMetrics creates the metrics for a bot on q (to hand to ghclient.Config.Observer before New).
func NewMetrics(q *queue.Queue) *Metrics { return newMetrics(q) }

// New checks the options and prepares the bot's tables.
func New(ctx context.Context, o Options) (*Bot, error) {
	if o.Config == nil || o.GitHub == nil || o.Queue == nil {
		return nil, fmt.Errorf("bot: Config, GitHub and Queue are required")
	}
	if len(o.Secrets) == 0 {
		return nil, fmt.Errorf("bot: no webhook secret: refusing to start (unsigned deliveries would be accepted)")
	}
	for _, s := range o.Secrets {
		if len(s) == 0 {
			return nil, fmt.Errorf("bot: an empty webhook secret would accept forged deliveries: refusing to start")
		}
	}
	st, err := store.Open(ctx, o.Queue.DB())
	if err != nil {
		return nil, err
	}
	b := &Bot{cfg: o.Config, secrets: o.Secrets, gh: o.GitHub, queue: o.Queue, store: st, git: o.Git, log: o.Logger,
		metrics: o.Metrics, inflight: newByteBudget(o.Config.Webhook.MaxBytesInFlight),
		smokeSlots: newSmokeSlots(o.Config.Smoke), pusher: o.BundlePusher}
	if b.registries, err = loadRegistryLogins(o.Config.Registries); err != nil {
		return nil, err
	}
	if p := o.Config.Smoke.KindConfig; p != "" {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("bot: smoke.kindConfig: %w", err)
		}
		b.kindConfig = string(data)
	}
	pageKey, err := statuspage.LoadKey(ctx, o.Queue.DB())
	if err != nil {
		return nil, err
	}
	token := o.StatusToken
	if token == "" {
		if token, err = o.Config.Status.LoadToken(); err != nil {
			return nil, fmt.Errorf("bot: %w", err)
		}
	}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	b.pages = statuspage.New(statuspage.Options{Queue: o.Queue, Records: pageRecords{Store: st, b: b}, Key: pageKey, Token: token,
		Public: o.Config.Status.PublicRepositories, Workers: o.Config.Queue.Workers, MaxAttempts: o.Config.Queue.MaxAttempts, Logger: b.log})
	if token == "" {
		b.log.Warn("no status token configured: the status pages and /metrics answer 403 (set status.tokenEnv or status.tokenFile)")
	}
	if b.metrics == nil {
		b.metrics = newMetrics(o.Queue)
	}
	if b.git == nil {
		b.git = &gitcache.Cache{Dir: o.Config.Git.CacheDir, URL: o.Config.GitURL}
	}
	b.remote = o.RemoteOptions
	if b.checks, err = checkrun.New(ctx, o.Queue.DB(), o.Config.Checks.Name, 0); err != nil {
		return nil, err
	}
	b.checks.Broadcast = func(ctx context.Context) error { return o.Queue.Notify(ctx, checkRunEvent) }
	b.announcer = newAnnouncer(b)
	b.pool = &queue.Pool{Queue: o.Queue, Handler: b.handleJob, Workers: o.Config.Queue.Workers, Lease: o.Config.Queue.Lease,
		Grace: o.Config.Queue.ShutdownGrace, MaxAttempts: o.Config.Queue.MaxAttempts, Logger: b.log, Observe: b.metrics.observeJob,
		Deadline: o.Config.Timeouts.Job, Abandon: min(30*time.Second, o.Config.Queue.Lease/2), Gate: b.announcer.workersWait,
		OnEvent: func(event string) {
			if event == checkRunEvent {
				b.checks.Wake()
			}
		}}
	return b, nil
}

// Handler serves the webhook, probes, metrics and the status page.
func (b *Bot) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/webhook", b.handleWebhook)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /readyz", b.handleReady)
	mux.Handle("GET /metrics", b.pages.RequireToken(promhttp.HandlerFor(b.metrics.Registry, promhttp.HandlerOpts{})))
	b.pages.Mount(mux)
	return mux
}

func (b *Bot) handleReady(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := b.queue.Ping(ctx); err != nil {
		http.Error(w, "queue database unavailable", http.StatusServiceUnavailable)
		return
	}
	if !b.pool.Active() {
		http.Error(w, "workers not running", http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintln(w, "ready")
}

// Run executes queued jobs until ctx is done, then drains for the shutdown grace period and requeues what
// still runs. It also prunes old jobs hourly.
func (b *Bot) Run(ctx context.Context) error {
	go b.prune(ctx)
	// Announcements outlive ctx while the workers drain: a drained job may still queue a follow-up.
	actx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	b.announcer.run(actx)
	return b.pool.Run(ctx)
}

func (b *Bot) prune(ctx context.Context) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		if n, err := b.queue.Prune(ctx, time.Now().Add(-b.cfg.Queue.Retention)); err != nil && ctx.Err() == nil {
			b.log.Error("prune old jobs", "err", err)
		} else if n > 0 {
			b.log.Info("pruned old jobs", "jobs", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// handleJob decodes a job's task, of its kind's type, and runs its kind's handler.
func (b *Bot) handleJob(ctx context.Context, j *queue.Job) error {
	switch j.Kind {
	case kindCheck:
		return runJob(ctx, b, j, func(jc *jobCtx, ctx context.Context, t PullRequestTask) error {
			err := classify(jc.check(ctx, t))
			jc.settleCheckJob(ctx, context.Cause(ctx), err)
			return err
		})
	case kindEvaluate:
		return runJob(ctx, b, j, classified((*jobCtx).evaluate))
	case kindCommand:
		return runJob(ctx, b, j, classified((*jobCtx).commands))
	case kindPublish:
		return runJob(ctx, b, j, classified((*jobCtx).publish))
	case kindMergeGroup:
		return runJob(ctx, b, j, classified((*jobCtx).mergeGroup))
	case kindReleases:
		return runJob(ctx, b, j, classified((*jobCtx).pushScan))
	case kindRelease:
		return runJob(ctx, b, j, (*jobCtx).release)
	case kindPromotion:
		return runJob(ctx, b, j, (*jobCtx).promotion)
	}
	return queue.Permanent(fmt.Errorf("job %d: unknown kind %q", j.ID, j.Kind))
}

// runJob decodes job j's task into T and runs handle with it, as the task's installation on its repository.
func runJob[T task](ctx context.Context, b *Bot, j *queue.Job, handle func(*jobCtx, context.Context, T) error) error {
	var t T
	if err := json.Unmarshal(j.Payload, &t); err != nil {
		return queue.Permanent(fmt.Errorf("job %d: payload: %w", j.ID, err))
	}
	tg := t.target()
	repo, err := ghclient.ParseRepo(tg.Repo)
	if err != nil {
		return queue.Permanent(fmt.Errorf("job %d: %w", j.ID, err))
	}
	gh, err := b.gh.For(tg.Installation)
	if err != nil {
		return queue.Permanent(fmt.Errorf("job %d on %s: %w", j.ID, tg.Repo, err))
	}
	jc := &jobCtx{b: b, job: j, target: tg, repo: repo, gh: gh, log: b.log.With("job", j.ID, "kind", j.Kind, "repo", tg.Repo)}
	return handle(jc, ctx, t)
}

// classified is handle with its errors classified (classify).
func classified[T task](handle func(*jobCtx, context.Context, T) error) func(*jobCtx, context.Context, T) error {
	return func(jc *jobCtx, ctx context.Context, t T) error { return classify(handle(jc, ctx, t)) }
}

// classify marks errors retrying cannot fix: GitHub answering that the object does not exist or the
// request is invalid or forbidden. A rate limit longer than the client waits (github.maxRateLimitWait) is
// neither: the job is queued again to run after the reset, without counting the attempt.
func classify(err error) error {
	if reset, ok := ghclient.RateLimitedUntil(err); ok {
		return queue.RetryAt(deferUntil(reset, time.Now()), err)
	}
	switch ghclient.StatusOf(err) {
	case http.StatusForbidden, http.StatusNotFound, http.StatusGone, http.StatusUnprocessableEntity:
		return queue.Permanent(err)
	}
	return err
}

// maxDeferral bounds how far ahead a rate-limited job is put (GitHub's windows last an hour).
const maxDeferral = 2 * time.Hour

// deferUntil is when a job rate limited until reset runs again: a second after the reset, at least a
// second from now and at most maxDeferral ahead.
func deferUntil(reset, now time.Time) time.Time {
	if reset.Before(now) {
		reset = now
	}
	if limit := now.Add(maxDeferral); reset.After(limit) {
		reset = limit
	}
	return reset.Add(time.Second)
}

// jobCtx is what one job's handler works with.
type jobCtx struct {
	b   *Bot
	job *queue.Job
	// target is the job's repository and installation (the rest of its task is its handler's argument).
	target Target
	repo   ghclient.Repo
	gh     ghclient.GitHub
	log    *slog.Logger
	// breaker remembers the registry hosts that timed out in this job (remoteOptions).
	breaker registry.Breaker
}

// enqueue adds a follow-up job; delivery makes it idempotent across retries of this job.
func (jc *jobCtx) enqueue(ctx context.Context, kind, delivery string, t PullRequestTask) error {
	key, serial := "", false
	cancelRunning := false
	switch kind {
	case kindCheck:
		key, cancelRunning = prKey(t.Repo, t.PR), true
	case kindEvaluate, kindPublish:
		serial = true
	}
	j, err := newJob(jc.job.Event, kind, t, key, cancelRunning, serial)
	if err != nil {
		return err
	}
	j.Delivery = delivery
	_, err = jc.b.enqueue(ctx, j, t, "")
	return err
}

// enqueue queues a job (t is its task; closeReason says why a job it supersedes never runs), stops the
// running jobs it supersedes and wakes a worker. A check job of a pull request's head is announced: its
// check run is created in progress at once, and the check runs of the queued jobs it superseded are closed.
func (b *Bot) enqueue(ctx context.Context, j *queue.Job, t task, closeReason string) (queue.Enqueued, error) {
	received := time.Now()
	an := announcement{delivery: j.Delivery, target: t.target(), reason: closeReason, received: received}
	if pt, ok := t.(PullRequestTask); ok && j.Kind == kindCheck && pt.PR != 0 && pt.HeadSHA != "" {
		// Claimed with the job, before any worker (of any replica) can start it: the worker then waits for
		// the announcer's create.
		j.WithJob = func(ctx context.Context, tx *queue.Tx, id int64) (err error) {
			an.job = id
			an.ref, an.lease, err = b.claimAnnouncement(ctx, tx, id, pt)
			return err
		}
	}
	res, err := b.queue.Enqueue(ctx, *j)
	if err != nil || res.Duplicate {
		return res, err
	}
	an.closeJobs = res.Superseded
	if an.lease != 0 || len(an.closeJobs) > 0 {
		if an.reason == "" {
			an.reason = fmt.Sprintf("Superseded by job %d (%s).", res.ID, j.Event)
		}
		b.announcer.send(an)
	}
	b.pool.Cancel(res.Cancel...)
	b.pool.Wake()
	return res, nil
}

// checkRunEvent is the queue event a process sends when it ended a check run's create (checkrun.Owner).
const checkRunEvent = "checkrun"

// runURL is the status page of a run (the check run's details link), under its unguessable page ID.
func (b *Bot) runURL(id int64) string {
	base := strings.TrimSuffix(b.cfg.PublicURL, "/")
	return base + b.pages.RunPath(id)
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
