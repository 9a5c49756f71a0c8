package pipeline

import (
	"bytes"
	"fmt"
	"io"
	"sync"

	"github.com/catalogbot/catalogbot/report"
)

// Observer is told how a run progresses, stage by stage; the CLI prints it, the bot updates its check run.
// Calls come from the goroutine running the pipeline, except StageLog, which a stage's workers may call
// concurrently. An observer must not block for long: the stages wait for it.
type Observer interface {
	// StageStarted: the stage name begins.
	StageStarted(name string)
	// StageLog is one line of a stage's own progress (render's "render [3/10] ...", smoke's
	// "smoke: [ 12.3s] ..."), without its newline: detail for a person, not a stage.
	StageLog(stage, line string)
	// StageDone: the stage finished with s (its Name, Status, Duration and Diagnostics final).
	StageDone(s report.Stage)
}

// TextProgress is the observer the CLI uses: a line "catalogbot: <stage>..." per stage start and the
// stages' own lines, as they come, written to w; nil (no observer) when w is nil.
func TextProgress(w io.Writer) Observer {
	if w == nil {
		return nil
	}
	return &textProgress{w: w}
}

type textProgress struct {
	mu sync.Mutex
	w  io.Writer
}

func (t *textProgress) StageStarted(name string) { t.line("catalogbot: " + name + "...") }
func (t *textProgress) StageLog(_, line string)  { t.line(line) }
func (t *textProgress) StageDone(report.Stage)   {}

func (t *textProgress) line(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintln(t.w, s)
}

// stageLines is the io.Writer a stage's library writes its progress to: each complete line becomes a
// StageLog event of the stage. Safe for concurrent writers; close delivers a last unterminated line.
type stageLines struct {
	obs   Observer
	stage string
	mu    sync.Mutex
	buf   []byte
}

// stageWriter is where the stage named stage writes its progress: nil (no writer) without an observer, so
// libraries skip formatting lines nobody reads.
func (s *state) stageWriter(stage string) io.Writer {
	if s.in.Observer == nil {
		return nil
	}
	w := &stageLines{obs: s.in.Observer, stage: stage}
	s.openLines = append(s.openLines, w)
	return w
}

func (l *stageLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		l.obs.StageLog(l.stage, string(l.buf[:i]))
		l.buf = l.buf[i+1:]
	}
	return len(p), nil
}

func (l *stageLines) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) > 0 {
		l.obs.StageLog(l.stage, string(l.buf))
		l.buf = nil
	}
}

// closeLines delivers the last unterminated lines of the stage writers handed out so far.
func (s *state) closeLines() {
	for _, l := range s.openLines {
		l.close()
	}
	s.openLines = nil
}
