package pipeline_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/report"
)

// recorder keeps an observer's events, one string each.
type recorder struct {
	mu     sync.Mutex
	events []string
	done   []report.Stage
}

func (r *recorder) add(e string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}
func (r *recorder) StageStarted(name string)    { r.add("start " + name) }
func (r *recorder) StageLog(stage, line string) { r.add("log " + stage + " " + line) }
func (r *recorder) StageDone(s report.Stage) {
	r.add("done " + s.Name)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = append(r.done, s)
}

// The observer sees every stage of the report start and finish, in the report's order, each finished
// stage exactly as the report holds it; the CLI's text observer prints the lines it always printed. The
// attack is a stage log line read back as a stage (render's "[3/10]" lines became check run "stages"):
// stage events name pipeline stages only.
func TestObserverSeesEachStage(t *testing.T) {
	sc := scenarios()[0]
	ctx := t.Context()
	w := newWorld(t)
	repoDir := filepath.Join(t.TempDir(), "repo")
	g := initRepo(t, repoDir)
	base := g.commit(ctx, t, sc.base(w), "base", "catalog-admin")
	g.branch(t, "pr", base)
	g.commit(ctx, t, sc.head(w), "change", sc.author)
	w.push(ctx, t)
	repo, err := gitrepo.Open(repoDir)
	if err != nil {
		t.Fatal(err)
	}
	var rec recorder
	var text bytes.Buffer
	both := pair{&rec, pipeline.TextProgress(&text)}
	r, err := pipeline.Run(ctx, pipeline.Input{Repo: repo, Base: "main", Head: "pr", Author: sc.author, Observer: both,
		RemoteOptions: []remote.Option{fastRetry}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Stages) < 5 {
		t.Fatalf("%d stages in the report; the test needs a full run", len(r.Stages))
	}
	var want []string
	var wantText strings.Builder
	for _, s := range r.Stages {
		want = append(want, "start "+s.Name, "done "+s.Name)
		fmt.Fprintf(&wantText, "catalogbot: %s...\n", s.Name) // the CLI's line, as before observers
	}
	var got []string
	for _, e := range rec.events {
		if !strings.HasPrefix(e, "log ") {
			got = append(got, e)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stage events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i, s := range rec.done {
		if i >= len(r.Stages) || s.Name != r.Stages[i].Name || s.Status != r.Stages[i].Status || s.Duration != r.Stages[i].Duration ||
			len(s.Diagnostics) != len(r.Stages[i].Diagnostics) {
			t.Errorf("done event %d: %+v, report holds %+v", i, s, r.Stages[min(i, len(r.Stages)-1)])
		}
	}
	if text.String() != wantText.String() {
		t.Errorf("text progress:\n%s\nwant:\n%s", text.String(), wantText.String())
	}
}

// pair sends each event to two observers.
type pair [2]pipeline.Observer

func (p pair) StageStarted(n string)    { p[0].StageStarted(n); p[1].StageStarted(n) }
func (p pair) StageLog(s, l string)     { p[0].StageLog(s, l); p[1].StageLog(s, l) }
func (p pair) StageDone(s report.Stage) { p[0].StageDone(s); p[1].StageDone(s) }
