package bot

import (
	"context"
	"embed"
	"html/template"
	"net/http"
	"time"

	"github.com/catalogbot/catalogbot/bot/queue"
	"github.com/catalogbot/catalogbot/report"
)

//go:embed templates/*.html
var templateFS embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"short": short,
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
	"icon": func(s report.Status) string {
		return map[report.Status]string{report.Pass: "✅", report.Fail: "❌", report.ActionRequired: "⚠️", report.Error: "🔥", report.Skipped: "⏭️"}[s]
	},
}).ParseFS(templateFS, "templates/*.html"))

type indexPage struct {
	Depth   map[queue.State]int
	States  []queue.State
	Active  []*queue.Job
	Recent  []*queue.Job
	Runs    []*run
	Uptime  time.Duration
	Workers int
}

func (b *Bot) handleIndex(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	p := indexPage{States: queue.States, Uptime: time.Since(b.started).Round(time.Second), Workers: b.cfg.Queue.Workers}
	var err error
	if p.Depth, err = b.queue.Depth(ctx); err == nil {
		if p.Active, err = b.queue.List(ctx, 50, queue.Running, queue.Queued); err == nil {
			if p.Recent, err = b.queue.List(ctx, 30, queue.Done, queue.Failed, queue.Superseded); err == nil {
				p.Runs, err = b.store.recentRuns(ctx, 50)
			}
		}
	}
	if err != nil {
		b.log.Error("status page", "err", err)
		http.Error(w, "queue database unavailable", http.StatusServiceUnavailable)
		return
	}
	render(w, "index.html", p)
}

func render(w http.ResponseWriter, name string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	if err := pages.ExecuteTemplate(w, name, data); err != nil {
		http.Error(w, "rendering failed", http.StatusInternalServerError)
	}
}
