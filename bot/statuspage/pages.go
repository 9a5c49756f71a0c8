// Package statuspage is the App's status pages: the status page (/: the queue, recent runs, releases and
// promotions), a run's page (/runs/{id}: the check run's details link) and the status token that opens
// them and /metrics. It reads the queue and the bot's records through Queue and Records only.
package statuspage

import (
	"context"
	"embed"
	"html/template"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/catalogbot/catalogbot/bot/queue"
	"github.com/catalogbot/catalogbot/bot/store"
	"github.com/catalogbot/catalogbot/report"
)

//go:embed templates/*.html
var templateFS embed.FS

// pages are the status pages' templates, parsed on first use: not at every start of the binary, which
// mostly validates (0.4 ms of its start-up).
var pages = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("").Funcs(template.FuncMap{
		"short": func(sha string) string { return sha[:min(len(sha), 12)] },
		"ago": func(t time.Time) string {
			if t.IsZero() {
				return "–"
			}
			return time.Since(t).Round(time.Second).String() + " ago"
		},
		"dur": func(d time.Duration) string { return d.Round(time.Millisecond).String() },
		"span": func(a, b time.Time) string {
			if a.IsZero() || b.IsZero() {
				return "–"
			}
			return b.Sub(a).Round(time.Millisecond).String()
		},
		"until": func(t time.Time) string {
			if d := time.Until(t); d > 0 {
				return "in " + d.Round(time.Second).String()
			}
			return "due now"
		},
		"details": detailParts,
		"clip":    func(s string) string { return store.ClipRunes(s, maxListErrorRunes) },
		"icon": func(s report.Status) string {
			return map[report.Status]string{report.Pass: "✅", report.Fail: "❌", report.ActionRequired: "⚠️", report.Error: "🔥", report.Skipped: "⏭️"}[s]
		},
	}).ParseFS(templateFS, "templates/*.html"))
})

// Options are the pages' dependencies and settings. Queue, Records and Key are required.
type Options struct {
	Queue   Queue
	Records Records
	// Key is the key run page IDs are derived from (LoadKey).
	Key []byte
	// Token is the status token ("": the pages answer 403); Public the repositories whose run pages show
	// without it (Config.PublicRepositories).
	Token  string
	Public []string
	// Workers and MaxAttempts are the queue's settings, as the pages show them.
	Workers, MaxAttempts int
	Logger               *slog.Logger
}

// Pages serves the status pages.
type Pages struct {
	queue   Queue
	records Records
	auth    auth
	key     []byte
	log     *slog.Logger
	workers int
	// maxAttempts is a job's attempts, as a run page shows them.
	maxAttempts int
	started     time.Time
}

// New prepares the pages; the status page counts the uptime from here.
func New(o Options) *Pages {
	p := &Pages{queue: o.Queue, records: o.Records, auth: newAuth(o.Token, o.Public), key: o.Key, log: o.Logger,
		workers: o.Workers, maxAttempts: o.MaxAttempts, started: time.Now()}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	return p
}

// Mount adds the status page (GET /, with the status token) and the run pages (GET /runs/{id}) to mux.
func (p *Pages) Mount(mux *http.ServeMux) {
	mux.Handle("GET /{$}", p.RequireToken(http.HandlerFunc(p.handleIndex)))
	mux.HandleFunc("GET /runs/{id}", p.handleRun)
}

type indexPage struct {
	Depth  map[queue.State]int
	States []queue.State
	Active []*queue.Job
	Recent []*queue.Job
	Runs   []*store.Run
	// Releases are the App's releases of merged bundle directories, most recently worked on first.
	Releases []*store.Release
	// Promotions are the App's promotions of packages into new catalogs, most recently worked on first.
	Promotions []*store.Promotion
	Uptime     time.Duration
	Workers    int
}

func (p *Pages) handleIndex(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	page := indexPage{States: queue.States, Uptime: time.Since(p.started).Round(time.Second), Workers: p.workers}
	var err error
	if page.Depth, err = p.queue.Depth(ctx); err == nil {
		if page.Active, err = p.queue.List(ctx, 50, queue.Running, queue.Queued); err == nil {
			if page.Recent, err = p.queue.List(ctx, 30, queue.Done, queue.Failed, queue.Superseded); err == nil {
				if page.Runs, err = p.records.RecentRuns(ctx, 50); err == nil {
					if page.Releases, err = p.records.RecentReleases(ctx, 30); err == nil {
						page.Promotions, err = p.records.RecentPromotions(ctx, 30)
					}
				}
			}
		}
	}
	if err != nil {
		p.log.Error("status page", "err", err)
		http.Error(w, "queue database unavailable", http.StatusServiceUnavailable)
		return
	}
	render(w, "index.html", page)
}

// maxListErrorRunes bounds the error a job list shows per job (a run page shows store.MaxErrorRunes).
const maxListErrorRunes = 300

func render(w http.ResponseWriter, name string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	if err := pages().ExecuteTemplate(w, name, data); err != nil {
		http.Error(w, "rendering failed", http.StatusInternalServerError)
	}
}
