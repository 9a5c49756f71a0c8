package policy

import (
	"compress/gzip"
	"io"
)

// gzipCounter measures how large data is gzipped, keeping none of it.
type gzipCounter struct {
	n  countWriter
	zw *gzip.Writer
}

type countWriter struct{ n int }

func (c *countWriter) Write(p []byte) (int, error) { c.n += len(p); return len(p), nil }

func newGzipCounter() *gzipCounter {
	g := &gzipCounter{}
	g.zw = gzip.NewWriter(&g.n)
	return g
}

func (g *gzipCounter) Write(p []byte) { _, _ = g.zw.Write(p) }

// Size closes the stream and returns its compressed size.
func (g *gzipCounter) Size() int {
	_ = g.zw.Close()
	return g.n.n
}

var _ io.Writer = (*countWriter)(nil)
