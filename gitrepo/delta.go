package gitrepo

import (
	"errors"
	"fmt"
)

var errBadDelta = errors.New("a delta that does not apply to its base")

// patch applies a git delta (pack-format.txt: the base's size, the result's size, then copy and insert
// instructions) to base. The size the delta declares may be at most limit (a small delta can declare,
// and copy its way to, a huge result); up to preallocate bytes of it are allocated at once.
func patch(base, delta []byte, limit int64) ([]byte, error) {
	src, delta, ok := uvarint(delta)
	if !ok || src != uint64(len(base)) {
		return nil, errBadDelta
	}
	size, delta, ok := uvarint(delta)
	if !ok {
		return nil, errBadDelta
	}
	if size > uint64(limit) {
		return nil, fmt.Errorf("a delta's result of %d bytes, more than the %d-byte limit of one object held in memory", size, limit)
	}
	out := make([]byte, 0, min(size, preallocate)) // grown as the instructions fill it: they may not
	for len(delta) > 0 {
		cmd := delta[0]
		delta = delta[1:]
		switch {
		case cmd&0x80 != 0: // copy from the base: offset and size bytes as the low bits say
			var off, n uint64
			for i := range 7 {
				if cmd&(1<<i) == 0 {
					continue
				}
				if len(delta) == 0 {
					return nil, errBadDelta
				}
				if i < 4 {
					off |= uint64(delta[0]) << (8 * i)
				} else {
					n |= uint64(delta[0]) << (8 * (i - 4))
				}
				delta = delta[1:]
			}
			if n == 0 {
				n = 0x10000
			}
			if off+n > uint64(len(base)) || uint64(len(out))+n > size {
				return nil, errBadDelta
			}
			out = append(out, base[off:off+n]...)
		case cmd != 0: // insert the next cmd bytes of the delta
			n := int(cmd)
			if n > len(delta) || uint64(len(out)+n) > size {
				return nil, errBadDelta
			}
			out = append(out, delta[:n]...)
			delta = delta[n:]
		default:
			return nil, errBadDelta // instruction 0 is reserved
		}
	}
	if uint64(len(out)) != size {
		return nil, errBadDelta
	}
	return out, nil
}

// uvarint reads a delta header's size: seven bits a byte, least significant first.
func uvarint(b []byte) (uint64, []byte, bool) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i]&0x80 == 0 {
			return v, b[i+1:], true
		}
	}
	return 0, b, false
}
