// Package filetree writes files and directory trees atomically and reads and compares trees: a reader
// (another process, a crash, a failed write) sees the old content or the new, never a half-written file
// or directory. ListCatalog is the one listing of a catalog directory every reader of a catalog takes
// (the loader, the owners attribution, the drift gates, the image build).
package filetree
