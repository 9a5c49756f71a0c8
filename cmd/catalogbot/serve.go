package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/bot"
	"github.com/catalogbot/catalogbot/diag"
)

// serveOptions are what serve's command line says.
type serveOptions struct {
	io         streams
	configPath string
	logLevel   string
	check      bool
	// bundlePusher builds and pushes the bundle images of merged bundle directories (bot.BundlePusher);
	// nil: the App releases nothing.
	bundlePusher bot.BundlePusher
}

func newServeCmd(runF runner[serveOptions]) *cobra.Command {
	o := &serveOptions{bundlePusher: bundlePusher{}}
	cmd := &cobra.Command{
		Use:   "serve --config bot.yaml",
		Short: "Run the GitHub App: check pull requests, merge what passes, republish the catalog",
		Long: `serve runs catalogbot as a webhook-driven GitHub App (or with a token for one repository).

It answers GitHub's webhooks at POST /webhook (HMAC-SHA256 signatures only; it refuses to start without a
secret), queues each delivery durably in SQLite, runs the pull-request pipeline on each pull request's
head, reports a check run and one readiness comment, merges with the tested head SHA as guard when every
condition is met, and republishes the catalog image after pushes to the default branch. It also serves
/healthz, /readyz, /metrics (Prometheus) and a status page at /.

Secrets are never in bot.yaml: it names the environment variables or files holding the webhook secrets,
the GitHub App private key or the token. See bot/README.md for a sample configuration, the GitHub App
permissions and a deployment manifest.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.io = streamsOf(cmd)
			return orDefault(runF, runServe)(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.configPath, "config", "bot.yaml", "the bot's configuration file")
	cmd.Flags().StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error (JSON logs on stderr)")
	cmd.Flags().BoolVar(&o.check, "check", false, "check the configuration, secrets and credentials, then exit")
	return cmd
}

// runServe runs the GitHub App until ctx ends, or with check only checks its configuration and secrets.
func runServe(ctx context.Context, o *serveOptions) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return diag.UsageError(fmt.Errorf("--log-level %q: %w", o.logLevel, err))
	}
	cfg, err := bot.LoadConfig(o.configPath)
	if err != nil {
		return err
	}
	if !o.check {
		return bot.Serve(ctx, cfg, o.io.err, level, nil, bot.WithBundlePusher(o.bundlePusher))
	}
	if _, err := cfg.LoadSecrets(); err != nil {
		return err
	}
	if _, _, err := cfg.LoadCredentials(); err != nil {
		return err
	}
	if err := cfg.CheckAccessSecrets(); err != nil { // the status token and the registry passwords
		return err
	}
	if _, err := cfg.QueueDSN(); err != nil { // the PostgreSQL URL's variable, when named
		return err
	}
	_, err = fmt.Fprintf(o.io.out, "%s: configuration, secrets and credentials are in order\n", o.configPath)
	return err
}
