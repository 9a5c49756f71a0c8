package bot

import (
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// filler is an io.Reader of n bytes of '{' that allocates nothing: the flood's bodies are streamed, so
// the test's own memory does not hide the bot's.
type filler struct{ n int64 }

func (f *filler) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, io.EOF
	}
	k := min(int64(len(p)), f.n)
	for i := range p[:k] {
		p[i] = '{'
	}
	f.n -= k
	return int(k), nil
}

// heapPeak samples the Go heap every millisecond until stopped and returns the peak HeapInuse and Sys.
func heapPeak() (stop func() (inuse, sys uint64)) {
	done := make(chan struct{})
	var inuse, sys uint64
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			inuse, sys = max(inuse, ms.HeapInuse), max(sys, ms.Sys)
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() (uint64, uint64) { close(done); wg.Wait(); return inuse, sys }
}

// An unauthenticated flood of 25 MiB bodies, 40 at once (half with no signature header, half with a
// well-formed forged one), does not take the bot's memory with it: bodies without a well-formed signature
// are refused before they are read, and those read share webhook.maxBytesInFlight (64 MiB) in pooled
// chunks. The stated bound: the heap in use (runtime HeapInuse, sampled every millisecond) grows by less
// than maxBytesInFlight + 32 MiB over its level before the flood (measured: +55 MiB), where reading every
// body at once would take 1 GiB. Signed deliveries sent during the flood are queued.
func TestAttackUnsignedBodyFlood(t *testing.T) {
	h := newHarness(t)
	cfg := h.cfg.Webhook
	if cfg.MaxBodyBytes != 25<<20 || cfg.MaxBytesInFlight != 64<<20 {
		t.Fatalf("defaults changed: maxBodyBytes %d, maxBytesInFlight %d", cfg.MaxBodyBytes, cfg.MaxBytesInFlight)
	}
	main := h.seedMain(repoConfig + "  requiredLabels: [lgtm]\n")
	head := h.label(h.releaseFoo("alice/foo", main, "alice"), "HEAD")
	h.openPR(1, "alice", head, main)
	signedBody := payload(t, "pull_request/labeled.payload.json", prEdits(1, "alice", head, main, nil))

	const flood, size = 40, 25 << 20
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: flood}}
	send := func(event, delivery, sig string, body io.Reader, n int64) (int, error) {
		req, err := http.NewRequest(http.MethodPost, h.srv.URL+"/webhook", body)
		if err != nil {
			return 0, err
		}
		req.ContentLength = n
		req.Header.Set("X-GitHub-Event", event)
		req.Header.Set("X-GitHub-Delivery", delivery)
		if sig != "" {
			req.Header.Set("X-Hub-Signature-256", sig)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil
	}

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	stop := heapPeak()
	var wg sync.WaitGroup
	var refused, read, busy atomic.Int64
	for i := range flood {
		wg.Go(func() {
			sig := ""
			if i%2 == 1 {
				sig = "sha256=" + strings.Repeat("0", 64)
			}
			status, err := send("pull_request", fmt.Sprintf("flood-%d", i), sig, &filler{n: size}, size)
			switch {
			case err != nil && sig == "":
				refused.Add(1) // answered 401 before the body was sent: the connection may close under it
			case err != nil:
				t.Errorf("forged delivery %d: %v", i, err)
			case status == http.StatusUnauthorized && sig == "":
				refused.Add(1)
			case status == http.StatusUnauthorized:
				read.Add(1)
			case status == http.StatusServiceUnavailable:
				busy.Add(1)
			default:
				t.Errorf("flood delivery %d: status %d", i, status)
			}
		})
	}
	// Signed deliveries get through while the flood is being read.
	var slowest time.Duration
	for i := range 10 {
		start := time.Now()
		status, err := send("pull_request", fmt.Sprintf("signed-%d", i), signed(signedBody), strings.NewReader(string(signedBody)), int64(len(signedBody)))
		if err != nil || status != http.StatusAccepted {
			t.Errorf("signed delivery %d during the flood: %d %v", i, status, err)
		}
		slowest = max(slowest, time.Since(start))
		time.Sleep(20 * time.Millisecond)
	}
	wg.Wait()
	inuse, sys := stop()
	grew := int64(inuse) - int64(before.HeapInuse)
	t.Logf("flood of %d × %d MiB: %d refused unread, %d read and refused, %d told to retry; heap in use %d MiB before, peak %d MiB (+%d MiB), Sys peak %d MiB; slowest signed delivery %s",
		flood, size>>20, refused.Load(), read.Load(), busy.Load(), before.HeapInuse>>20, inuse>>20, grew>>20, sys>>20, slowest.Round(time.Millisecond))
	if bound := cfg.MaxBytesInFlight + 32<<20; grew > bound {
		t.Errorf("heap in use grew by %d MiB during the flood, over the bound of %d MiB", grew>>20, bound>>20)
	}
	if refused.Load() != flood/2 || read.Load()+busy.Load() != flood/2 {
		t.Errorf("unsigned: %d refused unread; forged: %d read, %d busy", refused.Load(), read.Load(), busy.Load())
	}
	if h.bot.inflight.inUse() != 0 {
		t.Errorf("%d bytes still reserved after the flood", h.bot.inflight.inUse())
	}
	h.waitIdle()
}

// eventName is a random name shaped like GitHub's event names: lower-case letters and underscores.
func eventName(n int) string {
	b := []byte(rand.Text() + rand.Text())[:n]
	for i := range b {
		b[i] = "abcdefghijklmnopqrstuvwxyz_"[int(b[i])%27]
	}
	return string(b)
}

// Thousands of requests with random X-GitHub-Event values, unsigned or signed, and signed installation
// events with random actions, add no metric series: labels come from a fixed set, anything else is
// "other".
func TestAttackMetricSeriesFlood(t *testing.T) {
	h := newHarness(t)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	post := func(event, sig string, body []byte) error {
		req, err := http.NewRequest(http.MethodPost, h.srv.URL+"/webhook", strings.NewReader(string(body)))
		if err != nil {
			return err
		}
		req.Header.Set("X-GitHub-Event", event)
		req.Header.Set("X-GitHub-Delivery", rand.Text())
		if sig != "" {
			req.Header.Set("X-Hub-Signature-256", sig)
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.Body.Close()
	}
	install := payload(t, "installation/created.payload.json", nil)
	const n = 4000
	next := make(chan int)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := range next {
				event := eventName(8 + i%10)
				body := []byte(`{"action":"` + event + `"}`)
				var err error
				switch i % 4 {
				case 0:
					err = post(event, "", body)
				case 1:
					err = post(event, "sha256="+strings.Repeat("a", 64), body)
				case 2:
					err = post(event, signed(body), body)
				default:
					b := []byte(strings.Replace(string(install), `"action":"created"`, `"action":"`+event+`"`, 1))
					err = post("installation", signed(b), b)
				}
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()

	allowed := map[string]bool{"ping": true, "other": true}
	for e := range handledEvents {
		allowed[e] = true
	}
	series := map[string]int{}
	for _, line := range strings.Split(h.get("/metrics"), "\n") {
		if strings.HasPrefix(line, "#") || !strings.HasPrefix(line, "catalogbot_") {
			continue
		}
		name, _, _ := strings.Cut(line, "{")
		series[name]++
		for _, l := range []string{`event="`, `action="`} {
			if _, v, ok := strings.Cut(line, l); ok {
				v, _, _ = strings.Cut(v, `"`)
				if l == `event="` && !allowed[v] || l == `action="` && installationAction(v) != v {
					t.Errorf("series with a label from a request: %s", line)
				}
			}
		}
	}
	if got := series["catalogbot_webhook_deliveries_total"]; got > 4 {
		t.Errorf("%d webhook delivery series after %d random events, want at most 4", got, n)
	}
	if got := series["catalogbot_installation_events_total"]; got != 1 {
		t.Errorf("%d installation event series, want 1 (action other)", got)
	}
	t.Logf("series after %d random events: %v", n, series)
}
