package catalog

import "unsafe"

// objectScratch is the memory a loader decodes a bundle's olm.bundle.object manifests into: one after
// another in one buffer, reused from bundle to bundle when not too large. The loader decodes each
// manifest once, to check it, and hands them to the bundle visitor (LoadOptions.VisitBundle), which reads
// them decoded instead of decoding the base64 again.
type objectScratch struct {
	buf   []byte   // the manifests of the bundle being read, end to end
	views [][]byte // each manifest, in the order of the bundle's properties
	need  int      // what buf must hold for this bundle's manifests to fit
}

// reset starts a bundle. The views of the previous one are cleared so they keep no memory alive.
func (s *objectScratch) reset() {
	clear(s.views)
	s.buf, s.views, s.need = s.buf[:0], s.views[:0], 0
}

// room is the memory the next manifest decodes into (scan.ReusedBytes): what is left of buf.
func (s *objectScratch) room() []byte { return s.buf[len(s.buf):] }

// add records m, the manifest just decoded into room() or, when it did not fit, into its own memory. A
// view is never nil (an empty manifest is empty), so that a visitor can tell a manifest from none.
func (s *objectScratch) add(m []byte) {
	if m == nil {
		m = []byte{}
	}
	s.need += len(m) + 2 // a decode asks for room for its padding (base64.Encoding.DecodedLen)
	if r := s.room(); len(m) > 0 && cap(r) >= len(m) && unsafe.SliceData(m) == unsafe.SliceData(r[:1]) {
		s.buf = s.buf[:len(s.buf)+len(m)]
	}
	s.views = append(s.views, m)
}

// done makes room for a bundle as large as this one, when it did not fit and is not over maxKeptBuffer:
// twice the room there was, when that is more, so that a catalog whose bundles grow from version to
// version does not take new memory for each.
func (s *objectScratch) done() {
	if s.need > cap(s.buf) && s.need <= maxKeptBuffer {
		s.buf = make([]byte, 0, min(max(s.need, 2*cap(s.buf)), maxKeptBuffer))
	}
}
