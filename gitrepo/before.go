package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Before returns a reader of files of the catalog directory dir (slash paths relative to it) as they
// were before the change Changed lists: at ref, or with staged at HEAD (nothing, before the first
// commit). A file that did not exist there reads as ok false.
func Before(ctx context.Context, dir, ref string, staged bool) func(path string) ([]byte, bool, error) {
	if staged {
		ref = "HEAD"
	}
	return func(p string) ([]byte, bool, error) {
		spec := ref + ":./" + p
		// cat-file -e answers whether the object exists without printing it
		if err := exec.CommandContext(ctx, "git", "-C", dir, "cat-file", "-e", spec).Run(); err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return nil, false, nil
			}
			if errors.Is(err, exec.ErrNotFound) {
				return nil, false, ErrNoGit
			}
			return nil, false, err
		}
		data, err := Run(ctx, filepath.Clean(dir), "cat-file", "blob", spec)
		if err != nil {
			return nil, false, err
		}
		return data, true, nil
	}
}

// BeforeFiles is Before for a known list of files, read by one git process the first time the reader it
// returns is called (a caller that then needs none, as validation of the whole catalog, starts none): it
// answers for those files from what that process read, and for any other through Before.
func BeforeFiles(ctx context.Context, dir, ref string, staged bool, files []string) func(path string) ([]byte, bool, error) {
	if staged {
		ref = "HEAD"
	}
	slow := Before(ctx, dir, ref, staged)
	var in bytes.Buffer
	var asked []string
	for _, f := range files {
		if strings.ContainsAny(f, "\n\r") || strings.ContainsAny(ref, "\n\r") {
			continue // a line of cat-file's input cannot hold it: read through Before
		}
		asked = append(asked, f)
		in.WriteString(ref + ":./" + f + "\n")
	}
	if len(asked) == 0 {
		return slow
	}
	read := sync.OnceValues(func() (map[string]content, error) { return catFileBatch(ctx, dir, ref, asked, &in) })
	return func(p string) ([]byte, bool, error) {
		got, err := read()
		if err != nil {
			return nil, false, err
		}
		if c, ok := got[p]; ok {
			return c.data, c.ok, c.err
		}
		return slow(p)
	}
}

// content is what git cat-file --batch says of one file.
type content struct {
	data []byte
	ok   bool
	err  error
}

// catFileBatch reads the asked files at ref with one git cat-file --batch (in holds its input).
func catFileBatch(ctx context.Context, dir, ref string, asked []string, in *bytes.Buffer) (map[string]content, error) {
	cmd := exec.CommandContext(ctx, "git", "cat-file", "--batch")
	cmd.Dir = filepath.Clean(dir)
	cmd.Stdin = in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if errors.Is(err, exec.ErrNotFound) {
		return nil, ErrNoGit
	}
	if err != nil {
		return nil, fmt.Errorf("git cat-file --batch (in %s): %w: %s", dir, err, strings.TrimSpace(stderr.String()))
	}
	got := map[string]content{}
	for _, f := range asked {
		header, rest, found := bytes.Cut(out, []byte("\n"))
		if !found {
			return nil, fmt.Errorf("git cat-file --batch (in %s): output ends before %s", dir, f)
		}
		out = rest
		fields := strings.Fields(string(header))
		if len(fields) >= 2 && fields[len(fields)-1] == "missing" {
			got[f] = content{}
			continue
		}
		if len(fields) != 3 {
			return nil, fmt.Errorf("git cat-file --batch (in %s): %s: unexpected header %q", dir, f, header)
		}
		size, err := strconv.Atoi(fields[2])
		if err != nil || size < 0 || size+1 > len(out) || out[size] != '\n' {
			return nil, fmt.Errorf("git cat-file --batch (in %s): %s: bad size in %q", dir, f, header)
		}
		if fields[1] == "blob" {
			got[f] = content{data: out[:size:size], ok: true}
		} else {
			got[f] = content{err: fmt.Errorf("%s at %s in %s is a %s, not a file", f, ref, dir, fields[1])}
		}
		out = out[size+1:]
	}
	return got, nil
}
