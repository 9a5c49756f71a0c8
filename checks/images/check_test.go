package images

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/internal/registrytest"
)

func TestExistingImagesPassWithHeadsOnly(t *testing.T) {
	rc := newRecorder()
	reg := registrytest.New(t, rc.wrap)
	byDigest := push(t, reg.Host, "ops/operator:v1", image(t, "linux/amd64", "op"))
	push(t, reg.Host, "ops/bundle:v1", image(t, "linux/amd64", "bundle"))
	rc.start()

	ds, err := testChecker(Policy{}).Check(context.Background(), []Ref{
		use(reg.Host+"/ops/bundle:v1", 1, "op.v1", "image"),
		use(byDigest, 1, "op.v1", "relatedImages[operator]"),
		use(reg.Host+"/ops/operator:v1", 9, "op.v2", "relatedImages[operator]"),
	})
	if err != nil || len(ds) != 0 {
		t.Fatalf("Check = %v, %v; want no diagnostics and no error", ds, err)
	}
	if got := rc.count("HEAD manifest"); got != 3 {
		t.Errorf("manifest HEADs = %d, want 3 (one per unique reference)", got)
	}
	if got := rc.total("GET blob") + rc.total("GET manifest"); got != 0 {
		t.Errorf("GETs of manifests or blobs = %d, want 0", got)
	}
}

func TestMissingTagDigestAndRepository(t *testing.T) {
	reg := registrytest.New(t, nil)
	existing := push(t, reg.Host, "ops/operator:v1", image(t, "linux/amd64", "op"))
	missingDigest := existing[:strings.LastIndex(existing, ":")+1] + strings.Repeat("0", 64)

	ds, err := testChecker(Policy{}).Check(context.Background(), []Ref{
		use(reg.Host+"/ops/operator:v2", 3, "op.v2", "image"),
		use(missingDigest, 7, "op.v3", "relatedImages[operator]"),
		use(reg.Host+"/ops/nothing:v1", 11, "op.v4", "relatedImages[#2]"),
		use(reg.Host+"/ops/operator:v1", 15, "op.v5", "image"),
	})
	if err != nil {
		t.Fatalf("Check error = %v, want nil (missing images are the catalog's fault)", err)
	}
	want := []string{"pkg/catalog.json:3 image-missing", "pkg/catalog.json:7 image-missing", "pkg/catalog.json:11 image-missing"}
	if got := rules(ds); !slices.Equal(got, want) {
		t.Fatalf("diagnostics = %q, want %q", got, want)
	}
	d := ds[1]
	if d.Package != "pkg" || d.Bundle != "op.v3" || d.Severity != diag.Error || d.Check != CheckName || Category(d) != diag.Invalid {
		t.Errorf("diagnostic %+v: want package pkg, bundle op.v3, severity error, check images, category invalid", d)
	}
	for _, s := range []string{missingDigest, "relatedImages[operator]", reg.Host} {
		if !strings.Contains(d.Message, s) {
			t.Errorf("message %q does not name %q", d.Message, s)
		}
	}
}

func TestOneHeadPerUniqueReferenceAndOneDiagnosticPerUse(t *testing.T) {
	rc := newRecorder()
	reg := registrytest.New(t, rc.wrap)
	digestRef := push(t, reg.Host, "ops/operator:v1", image(t, "linux/amd64", "op"))
	rc.start()

	missing := reg.Host + "/ops/gone:v1"
	// The same digest written with a tag is the same reference.
	withTag := strings.Replace(digestRef, "@", ":v1@", 1)
	refs := []Ref{
		use(missing, 1, "op.v1", "relatedImages[gone]"),
		use(missing, 20, "op.v2", "relatedImages[gone]"),
		use(missing, 40, "op.v3", "relatedImages[gone]"),
		use(digestRef, 1, "op.v1", "relatedImages[operator]"),
		use(withTag, 20, "op.v2", "relatedImages[operator]"),
		use(digestRef, 40, "op.v3", "relatedImages[operator]"),
	}
	ds, err := (&Checker{Concurrency: 4, Keychain: testChecker(Policy{}).Keychain, Backoff: fastBackoff}).Check(context.Background(), refs)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"pkg/catalog.json:1 image-missing", "pkg/catalog.json:20 image-missing", "pkg/catalog.json:40 image-missing"}
	if got := rules(ds); !slices.Equal(got, want) {
		t.Fatalf("diagnostics = %q, want %q", got, want)
	}
	if got := rc.count("HEAD manifest /v2/ops/gone/manifests/v1"); got != 1 {
		t.Errorf("HEADs of the missing image = %d, want 1", got)
	}
	if got := rc.count("HEAD manifest"); got != 2 {
		t.Errorf("manifest HEADs = %d, want 2 (two unique references)", got)
	}
	if got := rc.total("GET blob") + rc.total("GET manifest"); got != 0 {
		t.Errorf("GETs of manifests or blobs = %d, want 0", got)
	}
}

// failFirst answers the first n manifest requests with status.
func failFirst(n, status int) func(http.ResponseWriter, *http.Request, int) bool {
	return func(w http.ResponseWriter, r *http.Request, i int) bool {
		if pathKind(r.URL.Path) != "manifest" || i >= n {
			return false
		}
		w.WriteHeader(status)
		return true
	}
}

func TestTransientFailuresAreRetried(t *testing.T) {
	for _, tc := range []struct {
		name          string
		status, fails int
	}{
		{"500 twice", http.StatusInternalServerError, 2},
		{"429 once", http.StatusTooManyRequests, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := newRecorder()
			reg := registrytest.New(t, rc.wrap)
			push(t, reg.Host, "ops/operator:v1", image(t, "linux/amd64", "op"))
			rc.fault = failFirst(tc.fails, tc.status)
			rc.start()
			ds, err := testChecker(Policy{}).Check(context.Background(), []Ref{use(reg.Host+"/ops/operator:v1", 1, "op.v1", "image")})
			if err != nil || len(ds) != 0 {
				t.Fatalf("Check = %v, %v; want success after retry", ds, err)
			}
			if got := rc.count("HEAD manifest"); got != tc.fails+1 {
				t.Errorf("manifest HEADs = %d, want %d", got, tc.fails+1)
			}
		})
	}
}

func TestRegistryAlways503IsInfrastructure(t *testing.T) {
	rc := newRecorder()
	reg := registrytest.New(t, rc.wrap)
	rc.fault = func(w http.ResponseWriter, r *http.Request, _ int) bool {
		w.WriteHeader(http.StatusServiceUnavailable)
		return true
	}
	rc.start()
	var refs []Ref
	for i := range 20 {
		refs = append(refs, use(fmt.Sprintf("%s/ops/img%d:v1", reg.Host, i), i+1, fmt.Sprintf("op.v%d", i), "image"))
	}
	refs = append(refs, use(reg.Host+"/ops/img0:v1", 99, "op.v99", "relatedImages[again]"))
	ds, err := (&Checker{Concurrency: 1, Keychain: testChecker(Policy{}).Keychain, Backoff: fastBackoff}).Check(context.Background(), refs)
	if err == nil || diag.CategoryOf(err) != diag.Infra {
		t.Fatalf("Check error = %v (category %v), want an infrastructure error", err, diag.CategoryOf(err))
	}
	if !strings.Contains(err.Error(), "registry "+reg.Host+": 20 image(s) not verified: HTTP 503") {
		t.Errorf("error %q does not name the registry, count the 20 unverified images and give the status", err)
	}
	if len(ds) != 21 {
		t.Fatalf("got %d diagnostics, want 21 (one per use): %v", len(ds), rules(ds))
	}
	for _, d := range ds {
		if d.Rule != RuleUnavailable || Category(d) != diag.Infra || !strings.Contains(d.Message, "HTTP 503") {
			t.Errorf("diagnostic %v: want rule %s, category infrastructure, naming HTTP 503", d, RuleUnavailable)
		}
	}
	// One round of retries (4 attempts of the first ping), then the registry counts as down.
	if ping, heads := rc.count("GET ping"), rc.count("HEAD manifest"); ping != 4 || heads != 0 {
		t.Errorf("registry saw %d pings and %d manifest HEADs, want 4 and 0", ping, heads)
	}
}

func TestUnauthorized(t *testing.T) {
	rc := newRecorder()
	reg := registrytest.New(t, rc.wrap)
	push(t, reg.Host, "private/operator:v1", image(t, "linux/amd64", "op"))
	rc.fault = func(w http.ResponseWriter, r *http.Request, _ int) bool {
		if !strings.HasPrefix(r.URL.Path, "/v2/private/") {
			return false
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
		w.WriteHeader(http.StatusUnauthorized)
		return true
	}
	rc.start()
	ds, err := testChecker(Policy{}).Check(context.Background(), []Ref{use(reg.Host+"/private/operator:v1", 5, "op.v1", "image")})
	if err != nil {
		t.Fatalf("Check error = %v, want nil", err)
	}
	if got := rules(ds); !slices.Equal(got, []string{"pkg/catalog.json:5 image-unauthorized"}) {
		t.Fatalf("diagnostics = %q, want one image-unauthorized", got)
	}
	if !strings.Contains(ds[0].Hint, "docker config") || !strings.Contains(ds[0].Message, "401") {
		t.Errorf("diagnostic %+v: want the status in the message and a hint about docker config credentials", ds[0])
	}
}

func TestConnectionRefusedIsInfrastructure(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := l.Addr().String()
	l.Close()
	ds, err := testChecker(Policy{}).Check(context.Background(), []Ref{use(host+"/ops/operator:v1", 1, "op.v1", "image")})
	if diag.CategoryOf(err) != diag.Infra {
		t.Fatalf("Check error = %v, want an infrastructure error", err)
	}
	if len(ds) != 1 || ds[0].Rule != RuleUnavailable || !strings.Contains(ds[0].Message, "connection refused") {
		t.Fatalf("diagnostics = %v, want one registry-unavailable naming connection refused", ds)
	}
}

func TestRequiredPlatforms(t *testing.T) {
	rc := newRecorder()
	reg := registrytest.New(t, rc.wrap)
	pushIndex(t, reg.Host, "ops/amd64-only:v1", "linux/amd64")
	pushIndex(t, reg.Host, "ops/multi:v1", "linux/amd64", "linux/arm64/v8")
	push(t, reg.Host, "ops/single-amd64:v1", image(t, "linux/amd64", "single"))
	push(t, reg.Host, "ops/single-arm64:v1", image(t, "linux/arm64", "single"))
	rc.start()

	refs := []Ref{
		use(reg.Host+"/ops/amd64-only:v1", 1, "a", "image"),
		use(reg.Host+"/ops/multi:v1", 2, "b", "image"),
		use(reg.Host+"/ops/single-amd64:v1", 3, "c", "image"),
		use(reg.Host+"/ops/single-arm64:v1", 4, "d", "image"),
		use(reg.Host+"/ops/absent:v1", 5, "e", "image"),
	}
	ds, err := testChecker(Policy{RequiredPlatforms: []string{"linux/arm64"}}).Check(context.Background(), refs)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"pkg/catalog.json:1 image-platform-missing", "pkg/catalog.json:3 image-platform-missing", "pkg/catalog.json:5 image-missing"}
	if got := rules(ds); !slices.Equal(got, want) {
		t.Fatalf("diagnostics = %q, want %q", got, want)
	}
	for _, d := range ds[:2] {
		if !strings.Contains(d.Message, "lacks required platform linux/arm64 (has linux/amd64)") {
			t.Errorf("message %q does not name the missing and present platforms", d.Message)
		}
	}
	if got := rc.count("GET manifest"); got != 5 {
		t.Errorf("manifest GETs = %d, want 5 (one per reference)", got)
	}
	// Only the two single images' configs: never a layer, never an index child.
	if got := rc.count("GET blob"); got != 2 {
		t.Errorf("blob GETs = %d, want 2 config blobs", got)
	}
}

func TestConcurrencyBound(t *testing.T) {
	for _, tc := range []struct{ concurrency, want int }{{3, 3}, {0, defaultConcurrency}} {
		t.Run(fmt.Sprint(tc.concurrency), func(t *testing.T) {
			rc := newRecorder()
			reg := registrytest.New(t, rc.wrap)
			var refs []Ref
			for i := range 5 * tc.want {
				refs = append(refs, use(fmt.Sprintf("%s/ops/img%d:v1", reg.Host, i), i+1, "b", "image"))
			}
			rc.delay = 20 * time.Millisecond
			rc.start()
			c := testChecker(Policy{})
			c.Concurrency = tc.concurrency
			if _, err := c.Check(context.Background(), refs); err != nil {
				t.Fatal(err)
			}
			if rc.maxInFlight > tc.want || rc.maxInFlight < 2 {
				t.Errorf("max requests in flight = %d, want between 2 and %d", rc.maxInFlight, tc.want)
			}
		})
	}
}

func TestCanceledContext(t *testing.T) {
	reg := registrytest.New(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := testChecker(Policy{}).Check(ctx, []Ref{use(reg.Host+"/ops/operator:v1", 1, "op.v1", "image")})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Check error = %v, want context.Canceled", err)
	}
}

func TestDeterministicOutput(t *testing.T) {
	reg := registrytest.New(t, nil)
	var refs []Ref
	for i := range 60 {
		refs = append(refs, use(fmt.Sprintf("%s/ops/img%d:v1", reg.Host, i%17), 60-i, fmt.Sprintf("b%d", i), "image"))
	}
	first, _ := testChecker(Policy{}).Check(context.Background(), refs)
	if len(first) != 60 || !slices.IsSortedFunc(first, diag.Compare) {
		t.Fatalf("got %d diagnostics (sorted: %v), want 60 sorted", len(first), slices.IsSortedFunc(first, diag.Compare))
	}
	for range 3 {
		again, _ := testChecker(Policy{}).Check(context.Background(), refs)
		if !slices.Equal(first, again) {
			t.Fatal("two runs over the same refs gave different diagnostics")
		}
	}
}

func TestSlowRegistryTimesOut(t *testing.T) {
	rc := newRecorder()
	reg := registrytest.New(t, rc.wrap)
	push(t, reg.Host, "ops/operator:v1", image(t, "linux/amd64", "op"))
	rc.delay = 300 * time.Millisecond
	rc.start()
	c := testChecker(Policy{})
	c.Timeout = 50 * time.Millisecond
	ds, err := c.Check(context.Background(), []Ref{use(reg.Host+"/ops/operator:v1", 1, "op.v1", "image")})
	if diag.CategoryOf(err) != diag.Infra {
		t.Fatalf("Check error = %v, want an infrastructure error", err)
	}
	if len(ds) != 1 || ds[0].Rule != RuleUnavailable || !strings.Contains(ds[0].Message, "timed out") {
		t.Fatalf("diagnostics = %v, want one registry-unavailable naming the timeout", ds)
	}
}
