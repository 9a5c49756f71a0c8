package pipeline

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/catalogbot/catalogbot/report"
)

type lineRecorder struct {
	mu    sync.Mutex
	lines []string
}

func (r *lineRecorder) StageStarted(string)    { panic("a stage writer started a stage") }
func (r *lineRecorder) StageDone(report.Stage) { panic("a stage writer finished a stage") }
func (r *lineRecorder) StageLog(stage, line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, stage+"|"+line)
}

// A stage's progress writer turns whole lines into log events of its stage, whatever the writes' split,
// from concurrent writers (render's and smoke's workers), and delivers an unterminated last line when the
// stage ends. None of it is ever a stage event (the recorder panics on one).
func TestStageWriterLines(t *testing.T) {
	rec := &lineRecorder{}
	s := &state{in: Input{Observer: rec}}
	w := s.stageWriter("render")
	for _, part := range []string{"render [1/", "5] a (img): rendered\nrender [2/5] b", " (img): cached\n", "tail without newline"} {
		if _, err := w.Write([]byte(part)); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"render|render [1/5] a (img): rendered", "render|render [2/5] b (img): cached"}; !slices.Equal(rec.lines, want) {
		t.Errorf("lines %q, want %q", rec.lines, want)
	}
	s.closeLines()
	if got := rec.lines[len(rec.lines)-1]; got != "render|tail without newline" {
		t.Errorf("last line %q", got)
	}

	rec.lines = nil
	w = s.stageWriter("smoke")
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				fmt.Fprintf(w, "smoke: worker %d step %d\n", g, i)
			}
		})
	}
	wg.Wait()
	s.closeLines()
	if len(rec.lines) != 400 {
		t.Fatalf("%d lines from 400 concurrent writes", len(rec.lines))
	}
	for _, l := range rec.lines {
		if !strings.HasPrefix(l, "smoke|smoke: worker ") || strings.Count(l, "step") != 1 {
			t.Errorf("torn line %q", l)
		}
	}
	if (&state{}).stageWriter("render") != nil {
		t.Error("without an observer a stage writer exists (libraries would format lines nobody reads)")
	}
	if TextProgress(nil) != nil {
		t.Error("TextProgress(nil) is an observer writing to nil")
	}
	var buf bytes.Buffer
	p := TextProgress(&buf)
	p.StageStarted("render")
	p.StageLog("render", "render [1/5] a (img): rendered")
	p.StageDone(report.Stage{Name: "render"})
	if want := "catalogbot: render...\nrender [1/5] a (img): rendered\n"; buf.String() != want {
		t.Errorf("text %q, want %q", buf.String(), want)
	}
}
