package filetree

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/catalogbot/catalogbot/diag"
)

// WriteFile replaces the file at path with what write writes: into a temporary file next to it, synced,
// given perm, then renamed over path, and the directory synced. On any error path is unchanged and the
// temporary file is gone. Missing parent directories are created.
func WriteFile(path string, perm fs.FileMode, write func(w io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := fill(f, perm, write); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return SyncDir(dir)
}

// fill writes f through a buffer, gives it perm, syncs and closes it.
func fill(f *os.File, perm fs.FileMode, write func(w io.Writer) error) error {
	bw := bufio.NewWriterSize(f, 64<<10)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Chmod(perm); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Close()
}

// WriteCacheFile replaces the cache file at path with data: written to a temporary file (mode 0600) next
// to it and renamed over path, so a concurrent reader sees the old file or the new one, whole. Not
// synced: after a crash an entry may be missing or truncated, which a cache reads as a miss. Missing parent
// directories are created with dirPerm. On any error path is unchanged and the temporary file is gone.
func WriteCacheFile(path string, dirPerm fs.FileMode, data []byte) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if err := os.MkdirAll(dir, dirPerm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// WriteNew creates the file at path, which must not exist, with what write writes, synced. It is for the
// files of a tree that ReplaceDir puts in place (the tree is new, so no temporary file and rename are
// needed, and ReplaceDir syncs its directories).
func WriteNew(path string, perm fs.FileMode, write func(w io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := fill(f, perm, write); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// WriteFileBytes is WriteFile of data.
func WriteFileBytes(path string, perm fs.FileMode, data []byte) error {
	return WriteFile(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// ReplaceDir puts a new directory in dst's place: fill writes the new tree into an empty temporary
// directory next to dst (fill syncs the files it writes); the tree is renamed into place, an existing dst
// moved aside first and removed after; every directory of the new tree is synced first. On any error
// dst is as it was (restored if it had been moved) and no temporary directory remains. dst that exists and is not a directory is refused.
func ReplaceDir(dst string, fill func(dir string) error) (err error) {
	dst = filepath.Clean(dst)
	parent, base := filepath.Split(dst)
	if parent == "" {
		parent = "."
	}
	if st, err := os.Lstat(dst); err == nil && !st.IsDir() {
		return diag.UsageError(fmt.Errorf("replace %s: it exists and is not a directory", dst))
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("replace %s: %w", dst, err)
	}
	tmp, err := os.MkdirTemp(parent, "."+base+".new-")
	if err != nil {
		return fmt.Errorf("replace %s: %w", dst, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("replace %s: %w", dst, err)
	}
	if err := fill(tmp); err != nil {
		return err
	}
	err = filepath.WalkDir(tmp, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		return SyncDir(p)
	})
	if err != nil {
		return fmt.Errorf("replace %s: %w", dst, err)
	}
	if err := swapDir(tmp, dst); err != nil {
		return fmt.Errorf("replace %s: %w", dst, err)
	}
	return nil
}

// swapDir renames src to dst, moving an existing dst aside (inside a fresh private directory, so its
// temporary name cannot clash) and removing it once src is in place.
func swapDir(src, dst string) error {
	_, err := os.Lstat(dst)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.Rename(src, dst); err != nil {
			return err
		}
		return SyncDir(filepath.Dir(dst))
	}
	if err != nil {
		return err
	}
	aside, err := os.MkdirTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".old-")
	if err != nil {
		return err
	}
	old := filepath.Join(aside, "old")
	if err := os.Rename(dst, old); err != nil {
		os.Remove(aside)
		return err
	}
	if err := os.Rename(src, dst); err != nil {
		if rerr := os.Rename(old, dst); rerr != nil {
			return fmt.Errorf("%w (and restoring the previous content from %s failed: %w)", err, old, rerr)
		}
		os.Remove(aside)
		return err
	}
	if err := SyncDir(filepath.Dir(dst)); err != nil {
		return err
	}
	if err := os.RemoveAll(aside); err != nil {
		return fmt.Errorf("the new content is in place, but removing the previous one at %s failed: %w", old, err)
	}
	return nil
}

// SyncDir flushes a directory's entries (new names, renames) to disk.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
