package bot

import (
	"context"
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"sync"
	"time"
	"unicode/utf8"

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
		"until": func(t time.Time) string {
			if d := time.Until(t); d > 0 {
				return "in " + d.Round(time.Second).String()
			}
			return "due now"
		},
		"details": detailParts,
		"clip":    func(s string) string { return clipRunes(s, maxListErrorRunes) },
		"icon": func(s report.Status) string {
			return map[report.Status]string{report.Pass: "✅", report.Fail: "❌", report.ActionRequired: "⚠️", report.Error: "🔥", report.Skipped: "⏭️"}[s]
		},
	}).ParseFS(templateFS, "templates/*.html"))
})

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

func (b *Bot) handleIndex(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	p := indexPage{States: queue.States, Uptime: time.Since(b.started).Round(time.Second), Workers: b.cfg.Queue.Workers}
	var err error
	if p.Depth, err = b.queue.Depth(ctx); err == nil {
		if p.Active, err = b.queue.List(ctx, 50, queue.Running, queue.Queued); err == nil {
			if p.Recent, err = b.queue.List(ctx, 30, queue.Done, queue.Failed, queue.Superseded); err == nil {
				if p.Runs, err = b.store.RecentRuns(ctx, 50); err == nil {
					if p.Releases, err = b.store.RecentReleases(ctx, 30); err == nil {
						p.Promotions, err = b.store.RecentPromotions(ctx, 30)
					}
				}
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

// runPage is what a run's page shows: the run, and why its job is waiting when an attempt failed.
type runPage struct {
	*store.Run
	Retry *retryInfo
}

// retryInfo is the run's job when its last attempt ended with an error: a job waiting to retry, running
// again, or failed for good. Error is the attempt's error, cut to maxErrorRunes.
type retryInfo struct {
	State                 queue.State
	Attempts, MaxAttempts int
	Error                 string
	Next                  time.Time
}

// maxErrorRunes bounds the error a run page shows (an error can quote a registry's or GitHub's answer);
// maxListErrorRunes the one a job list shows per job.
const (
	maxErrorRunes     = 2000
	maxListErrorRunes = 300
)

// clipRunes cuts s to n runes, saying how many it left out.
func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	runes := []rune(s)
	return string(runes[:n]) + fmt.Sprintf("… (%d more characters)", len(runes)-n)
}

// runPage adds the run's job to its page when the job's last attempt failed. The job may be gone (pruned
// after the retention): the page then shows the run alone.
func (b *Bot) runPage(ctx context.Context, r *store.Run) runPage {
	p := runPage{Run: r}
	j, err := b.queue.Get(ctx, r.JobID)
	if err != nil {
		b.log.Debug("run page: no job", "run", r.ID, "job", r.JobID, "err", err)
		return p
	}
	if j.Error == "" || j.State == queue.Done {
		return p
	}
	p.Retry = &retryInfo{State: j.State, Attempts: j.Attempts, MaxAttempts: b.cfg.Queue.MaxAttempts, Error: clipRunes(j.Error, maxErrorRunes)}
	if j.State == queue.Queued {
		p.Retry.Next = j.RunAfter
	}
	return p
}

func render(w http.ResponseWriter, name string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	if err := pages().ExecuteTemplate(w, name, data); err != nil {
		http.Error(w, "rendering failed", http.StatusInternalServerError)
	}
}
