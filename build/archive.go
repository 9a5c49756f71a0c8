package build

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/catalogbot/catalogbot/filetree"
)

// WriteLayoutArchive writes res as an OCI layout tar (one image, annotated with refName): the form kind
// loads into its nodes with the image's manifest digest intact.
func WriteLayoutArchive(ctx context.Context, res Result, file, refName string) error {
	dir, err := os.MkdirTemp("", "catalogbot-layout-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := WriteLayout(ctx, res, dir, refName); err != nil {
		return err
	}
	if err := TarDir(dir, file); err != nil {
		return fmt.Errorf("archive OCI layout to %s: %w", file, err)
	}
	return nil
}

// TarDir writes the files of dir (relative names, in walk order; owner 0:0, time 1970, modes 0644/0755)
// into the tar file, atomically: an OCI layout directory becomes the archive kind nodes and container
// runtimes load.
func TarDir(dir, file string) error {
	err := filetree.WriteFile(file, 0o644, func(w io.Writer) error {
		tw := tar.NewWriter(w)
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == dir {
				return err
			}
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			h, err := tar.FileInfoHeader(info, "")
			if err != nil {
				return err
			}
			// Only names and contents vary: the same layout gives the same archive bytes (release checksums).
			h.Name = filepath.ToSlash(rel)
			h.ModTime, h.AccessTime, h.ChangeTime = time.Unix(0, 0).UTC(), time.Time{}, time.Time{}
			h.Uid, h.Gid, h.Uname, h.Gname = 0, 0, "", ""
			h.Mode = 0o644
			if d.IsDir() {
				h.Name += "/"
				h.Mode = 0o755
			}
			if err := tw.WriteHeader(h); err != nil {
				return err
			}
			if d.IsDir() {
				return nil
			}
			in, err := os.Open(p)
			if err != nil {
				return err
			}
			defer in.Close()
			_, err = io.Copy(tw, in)
			return err
		})
		if err != nil {
			return err
		}
		return tw.Close()
	})
	if err != nil {
		return fmt.Errorf("tar of %s: %w", dir, err)
	}
	return nil
}
