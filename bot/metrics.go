package bot

import (
	"context"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/catalogbot/catalogbot/bot/queue"
)

// Metrics are the bot's Prometheus metrics, on their own registry (one per Bot, so tests do not share).
type Metrics struct {
	Registry       *prometheus.Registry
	deliveries     *prometheus.CounterVec
	webhookSeconds prometheus.Histogram
	jobs           *prometheus.CounterVec
	jobSeconds     *prometheus.HistogramVec
	stageSeconds   *prometheus.HistogramVec
	apiCalls       *prometheus.CounterVec
	rateRemaining  *prometheus.GaugeVec
	installations  *prometheus.CounterVec
	merges         *prometheus.CounterVec
	// inProgress is the time from a delivery's arrival to its check run in progress, by who created it
	// (announcer, worker).
	inProgress *prometheus.HistogramVec
}

func newMetrics(q *queue.Queue) *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "catalogbot_webhook_deliveries_total",
			Help: "Webhook deliveries by event (the events handled, ping, other) and result (queued, duplicate, ignored, bad_signature, too_large, bad_request, busy, error)."},
			[]string{"event", "result"}),
		webhookSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "catalogbot_webhook_duration_seconds",
			Help: "Time to answer a webhook delivery.", Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}}),
		jobs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "catalogbot_jobs_total",
			Help: "Job executions by kind and outcome (done, retry, deferred, failed, superseded, released, lease_lost)."}, []string{"kind", "outcome"}),
		jobSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "catalogbot_job_duration_seconds",
			Help: "Job execution time by kind.", Buckets: prometheus.ExponentialBuckets(0.01, 3, 10)}, []string{"kind"}),
		stageSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "catalogbot_stage_duration_seconds",
			Help: "Pipeline stage time by stage and status.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}, []string{"stage", "status"}),
		apiCalls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "catalogbot_github_api_calls_total",
			Help: "GitHub API requests by method and status (0: transport error)."}, []string{"method", "status"}),
		rateRemaining: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "catalogbot_github_rate_limit_remaining",
			Help: "Requests left in the GitHub rate limit window, as last reported, by resource."}, []string{"resource"}),
		installations: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "catalogbot_installation_events_total",
			Help: "installation and installation_repositories events by action."}, []string{"event", "action"}),
		merges: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "catalogbot_merges_total",
			Help: "Merge attempts by result (merged, head_moved, not_mergeable, unprocessable, base_moved_rerun, approvals_withdrawn_rerun)."}, []string{"result"}),
		inProgress: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "catalogbot_check_run_in_progress_seconds",
			Help:    "Time from a pull request delivery to its check run in progress, by creator (announcer, worker).",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}}, []string{"by"}),
	}
	m.Registry.MustRegister(m.deliveries, m.webhookSeconds, m.jobs, m.jobSeconds, m.stageSeconds, m.apiCalls, m.rateRemaining,
		m.installations, m.merges, m.inProgress, &depthCollector{q: q}, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// APICall and RateLimit implement ghclient.Observer.
func (m *Metrics) APICall(method string, status int) {
	m.apiCalls.WithLabelValues(method, strconv.Itoa(status)).Inc()
}

func (m *Metrics) RateLimit(resource string, remaining int) {
	m.rateRemaining.WithLabelValues(resource).Set(float64(remaining))
}

func (m *Metrics) observeJob(j *queue.Job, outcome string, d time.Duration) {
	m.jobs.WithLabelValues(j.Kind, outcome).Inc()
	m.jobSeconds.WithLabelValues(j.Kind).Observe(d.Seconds())
}

var depthDesc = prometheus.NewDesc("catalogbot_queue_jobs", "Jobs in the queue database by state.", []string{"state"}, nil)

// depthCollector reads the queue depth from the database at scrape time.
type depthCollector struct{ q *queue.Queue }

func (d *depthCollector) Describe(ch chan<- *prometheus.Desc) { ch <- depthDesc }

func (d *depthCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	depth, err := d.q.Depth(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(depthDesc, err)
		return
	}
	for _, s := range queue.States {
		ch <- prometheus.MustNewConstMetric(depthDesc, prometheus.GaugeValue, float64(depth[s]), string(s))
	}
}
