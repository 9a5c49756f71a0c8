package render

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/diag"
)

// Write writes the rendered catalog as <dir>/<Name>/<reference>/index.yaml (or index.json), each file as
// `opm render -o yaml|json` writes it, so identical input gives identical bytes.
//
// <dir>/<Name> is replaced as a whole: everything is written into a new directory next to it, synced,
// and renamed into place; the old one is moved aside first and removed after. A failure leaves the old
// directory as it was, and readers never see a half-written catalog.
func (o *Output) Write(dir, format string) error {
	if format != catalog.FormatYAML && format != catalog.FormatJSON {
		return diag.UsageError(fmt.Errorf("write rendered catalog: unknown format %q (want yaml or json)", format))
	}
	if !isDirName(o.Name) {
		return diag.UsageError(fmt.Errorf("write rendered catalog: name %q is not a single directory name", o.Name))
	}
	for _, r := range o.References {
		if !isDirName(r.Reference.Name) {
			return diag.UsageError(fmt.Errorf("write rendered catalog %s: reference name %q is not a single directory name", o.Name, r.Reference.Name))
		}
	}
	target := filepath.Join(dir, o.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write rendered catalog %s: %w", target, err)
	}
	tmp, err := os.MkdirTemp(dir, "."+o.Name+".new-")
	if err != nil {
		return fmt.Errorf("write rendered catalog %s: %w", target, err)
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("write rendered catalog %s: %w", target, err)
	}
	// Encoding YAML is the expensive part: one reference per CPU at a time.
	errs := make([]error, len(o.References))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, r := range o.References {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := writeReference(filepath.Join(tmp, r.Reference.Name), r.Catalog, format); err != nil {
				errs[i] = fmt.Errorf("write rendered catalog %s: reference %s: %w", target, r.Reference.Name, err)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := syncDir(tmp); err != nil {
		return fmt.Errorf("write rendered catalog %s: %w", target, err)
	}
	if err := replaceDir(tmp, target); err != nil {
		return fmt.Errorf("write rendered catalog %s: %w", target, err)
	}
	return nil
}

// isDirName reports whether s is one plain path element on every platform.
func isDirName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, `/\`) && filepath.IsLocal(s)
}

func writeReference(dir string, c *catalog.Catalog, format string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, "index."+format), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if format == catalog.FormatJSON {
		err = catalog.WriteJSON(w, c)
	} else {
		err = catalog.WriteYAML(w, c)
	}
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return syncDir(dir)
}

// replaceDir moves the finished directory tmp to target, replacing what was there.
func replaceDir(tmp, target string) error {
	aside, old := "", ""
	if _, err := os.Lstat(target); err == nil {
		if aside, err = os.MkdirTemp(filepath.Dir(target), "."+filepath.Base(target)+".old-"); err != nil {
			return err
		}
		old = filepath.Join(aside, "old")
		if err := os.Rename(target, old); err != nil {
			os.Remove(aside)
			return err
		}
	} else if !os.IsNotExist(err) {
		return err
	}
	if err := os.Rename(tmp, target); err != nil {
		if old != "" {
			if rerr := os.Rename(old, target); rerr != nil {
				return fmt.Errorf("%w (the old catalog is kept in %s: restoring it failed: %v)", err, old, rerr)
			}
			os.Remove(aside)
		}
		return err
	}
	if aside != "" {
		if err := os.RemoveAll(aside); err != nil {
			return fmt.Errorf("remove the replaced catalog %s: %w", old, err)
		}
	}
	return syncDir(filepath.Dir(target))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
