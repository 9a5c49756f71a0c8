package bot

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
)

// byteBudget bounds the webhook body bytes held in memory at once. A request reserves its body's size
// (its Content-Length, or maxBodyBytes when it sends none) before reading it and releases it when answered.
// Unlike a FIFO semaphore, a reservation that fits goes ahead of larger ones waiting: a flood of 25 MiB
// bodies does not queue GitHub's small signed deliveries behind it.
type byteBudget struct {
	mu      sync.Mutex
	used    int64
	limit   int64
	changed chan struct{} // closed and replaced at every release
}

func newByteBudget(limit int64) *byteBudget {
	return &byteBudget{limit: limit, changed: make(chan struct{})}
}

// acquire reserves n bytes, waiting until they fit or ctx is done (then it returns ctx's error and
// reserves nothing). n must not exceed the limit.
func (b *byteBudget) acquire(ctx context.Context, n int64) error {
	for {
		b.mu.Lock()
		if b.used+n <= b.limit {
			b.used += n
			b.mu.Unlock()
			return nil
		}
		ch := b.changed
		b.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// release returns n reserved bytes and wakes the waiters.
func (b *byteBudget) release(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	close(b.changed)
	b.changed = make(chan struct{})
}

// inUse is the number of bytes reserved.
func (b *byteBudget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// bodyChunk is the unit webhook bodies are read in. Chunks come from a pool and go back to it as soon as a
// body is refused, so a flood of forged bodies reuses the same memory instead of leaving garbage for the
// collector (which would let the heap grow to about twice what is reserved).
const bodyChunk = 64 << 10

var chunkPool = sync.Pool{New: func() any { c := make([]byte, bodyChunk); return &c }}

// chunkedBody is a request body read into pooled chunks.
type chunkedBody struct {
	chunks []*[]byte
	n      int
}

// reserve is the memory a body of n bytes holds once read: whole chunks.
func reserve(n int64) int64 { return (n + bodyChunk - 1) / bodyChunk * bodyChunk }

// readFrom reads r to its end.
func (c *chunkedBody) readFrom(r io.Reader) error {
	for {
		if c.n == len(c.chunks)*bodyChunk {
			c.chunks = append(c.chunks, chunkPool.Get().(*[]byte))
		}
		cur := *c.chunks[len(c.chunks)-1]
		k, err := r.Read(cur[c.n%bodyChunk:])
		c.n += k
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// writeTo writes the body to w (a hash: it never fails).
func (c *chunkedBody) writeTo(w io.Writer) {
	left := c.n
	for _, ch := range c.chunks {
		k := min(left, bodyChunk)
		w.Write((*ch)[:k])
		left -= k
	}
}

// bytes copies the body out.
func (c *chunkedBody) bytes() []byte {
	var buf bytes.Buffer
	buf.Grow(c.n)
	c.writeTo(&buf)
	return buf.Bytes()
}

// free gives the chunks back to the pool.
func (c *chunkedBody) free() {
	for _, ch := range c.chunks {
		chunkPool.Put(ch)
	}
	c.chunks, c.n = nil, 0
}
