package queue

import (
	"path/filepath"
	"testing"

	"github.com/catalogbot/catalogbot/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// backend is one database engine the queue runs on.
type backend struct {
	name string
	// fresh returns the DSN of a new, empty database (a SQLite path or a PostgreSQL URL).
	fresh func(t *testing.T) string
}

var backends = []backend{
	{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "queue.db") }},
	{"postgres", func(t *testing.T) string { return pgtest.Start(t) }},
}

// open opens a queue on a fresh database of the backend.
func (b backend) open(t *testing.T) *Queue {
	t.Helper()
	return open(t, b.fresh(t))
}

// forEachBackend runs test on every backend, as subtests named after them.
func forEachBackend(t *testing.T, test func(t *testing.T, bk backend)) {
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) { test(t, bk) })
	}
}
