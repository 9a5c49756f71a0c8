package bot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/bot/queue"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/netdeadline"
)

// ServeOption adds a dependency that bot.yaml cannot name.
type ServeOption func(*Options)

// WithBundlePusher makes the App release merged bundle directories, building and pushing their bundle
// images with p (Options.BundlePusher).
func WithBundlePusher(p BundlePusher) ServeOption {
	return func(o *Options) { o.BundlePusher = p }
}

// Serve runs the bot as `catalogbot serve` does until ctx is done: it reads the secrets and credentials
// cfg names, opens the queue, serves HTTP on ln (cfg.Listen when nil) and runs the workers. On shutdown
// it stops accepting deliveries first, then drains the workers for the grace period and requeues the rest.
func Serve(ctx context.Context, cfg *Config, logOut io.Writer, level slog.Level, ln net.Listener, opts ...ServeOption) error {
	log := NewLogger(logOut, level)
	secrets, err := cfg.LoadSecrets()
	if err != nil {
		return err
	}
	key, token, err := cfg.LoadCredentials()
	if err != nil {
		return err
	}
	dsn, err := cfg.QueueDSN()
	if err != nil {
		return err
	}
	dirs := []string{cfg.Git.CacheDir}
	if !queue.IsPostgres(dsn) {
		dirs = append(dirs, filepath.Dir(dsn))
	}
	for _, dir := range dirs {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return diag.UsageError(fmt.Errorf("bot state directory: %w", err))
		}
	}
	q, err := queue.Open(ctx, dsn) // its errors name the database without the password
	if err != nil {
		return diag.UsageError(err)
	}
	defer q.Close()
	metrics := NewMetrics(q)
	clients, err := ghclient.New(ghclient.Config{APIURL: cfg.GitHub.APIURL, AppID: cfg.GitHub.AppID, PrivateKey: key, Token: token,
		Observer: metrics, MaxRateLimitWait: cfg.GitHub.MaxRateLimitWait, Transport: netdeadline.Transport(http.DefaultTransport, cfg.Timeouts.GitHubRequest)})
	if err != nil {
		return diag.UsageError(err)
	}
	o := Options{Config: cfg, Secrets: secrets, GitHub: clients, Queue: q, Logger: log, Metrics: metrics}
	for _, opt := range opts {
		opt(&o)
	}
	b, err := New(ctx, o)
	if err != nil {
		return err
	}
	if ln == nil {
		if ln, err = (&net.ListenConfig{}).Listen(ctx, "tcp", cfg.Listen); err != nil {
			return diag.UsageError(fmt.Errorf("listen on %s: %w", cfg.Listen, err))
		}
	}
	srv := &http.Server{Handler: b.Handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWork()
	workDone := make(chan error, 1)
	go func() { workDone <- b.Run(workCtx) }()
	serveDone := make(chan error, 1)
	go func() { serveDone <- srv.Serve(ln) }()
	mode := "github app"
	if token != "" {
		mode = "token for " + cfg.GitHub.Repository
	}
	log.Info("catalogbot serving", "addr", ln.Addr().String(), "public_url", cfg.PublicURL, "auth", mode,
		"workers", cfg.Queue.Workers, "queue", q.DB().String(), "signing_keys", len(secrets))

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-serveDone:
	}
	log.Info("shutting down: no new deliveries, draining jobs", "grace", cfg.Queue.ShutdownGrace.String())
	shutCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil {
		log.Warn("http shutdown", "err", err)
	}
	stopWork()
	if err := <-workDone; err != nil {
		return err
	}
	log.Info("stopped")
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return diag.InfraError(fmt.Errorf("http server: %w", serveErr))
	}
	return nil
}
