package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/pipeline"
)

// repoSetup is a command's repository context, resolved once per invocation by resolveRepo and handed
// to what the verb runs (gh's Factory): the configuration of the repository's .catalogbot.yaml (the
// defaults when it has none), the layout it describes, and every .catalogbot.yaml the command looks at,
// each read and parsed once (readConfig is the one way a command reads one).
type repoSetup struct {
	cfg    *config.Config
	layout *pipeline.Layout
	// file is the real path of the configuration read ("" when there is none).
	file string
	read map[string]configRead // by real path
}

// configRead is one .catalogbot.yaml as readConfig read it: cfg is nil when there is no such file.
type configRead struct {
	cfg *config.Config
	err error
}

// resolveRepo reads repo's .catalogbot.yaml and resolves its layout (a template-driven layout's
// catalogs are the directories under repo that catalogs: names).
func resolveRepo(repo string) (*repoSetup, error) {
	s := &repoSetup{read: map[string]configRead{}}
	p := filepath.Join(repo, config.ConfigFile)
	cfg, err := s.readConfig(p, config.ConfigFile)
	switch {
	case err != nil:
		return nil, err
	case cfg == nil:
		cfg = config.Default()
	default:
		s.file = realFile(p)
	}
	layout, err := pipeline.LayoutIn(cfg, repo)
	if err != nil {
		return nil, err
	}
	s.cfg, s.layout = cfg, layout
	return s, nil
}

// readConfig reads and strictly parses the configuration file p (named name in its diagnostics); it is
// nil, without error, when p does not exist. What a setup read once it returns again (s may be nil:
// nothing resolved, nothing remembered).
func (s *repoSetup) readConfig(p, name string) (*config.Config, error) {
	real := realFile(p)
	if s != nil {
		if r, ok := s.read[real]; ok {
			return r.cfg, r.err
		}
	}
	var r configRead
	data, err := os.ReadFile(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		r.err = diag.UsageError(fmt.Errorf("reading %s: %w", name, err))
	default:
		r.cfg, _, r.err = config.ParseConfig(name, data)
	}
	if s != nil && s.read != nil {
		s.read[real] = r
	}
	return r.cfg, r.err
}

// realFile is file's absolute path with its directory's symbolic links resolved (git names the top of
// a repository so), or file when that fails.
func realFile(file string) string {
	dir, err := filepath.Abs(filepath.Dir(file))
	if err != nil {
		return file
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return filepath.Join(dir, filepath.Base(file))
}

// configFor is the .catalogbot.yaml governing dir: in dir or the nearest parent, stopping at the
// repository's top (a directory holding .git). None found is not an error (nil); a broken one is.
func (s *repoSetup) configFor(dir string) (*config.Config, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, diag.UsageError(fmt.Errorf("catalog directory %s: %w", dir, err))
	}
	for d := abs; ; d = filepath.Dir(d) {
		p := filepath.Join(d, config.ConfigFile)
		if cfg, err := s.readConfig(p, p); cfg != nil || err != nil {
			return cfg, err
		}
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil || filepath.Dir(d) == d {
			return nil, nil
		}
	}
}

// catalogDir is a verb's optional DIR argument ("" when not given), or else, in a git repository, the
// repository's catalog.dir (from its .catalogbot.yaml, default "catalog") when that directory exists,
// so a pre-commit hook without args never loads .git or other trees; else the working directory.
func (s *repoSetup) catalogDir(ctx context.Context, dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	top, err := gitrepo.TopLevel(ctx, ".")
	if err != nil {
		return ".", nil
	}
	cfg, err := s.readConfig(filepath.Join(top, config.ConfigFile), config.ConfigFile)
	switch {
	case err != nil:
		return "", err
	case cfg == nil:
		cfg = config.Default()
	}
	dir = filepath.Join(top, filepath.FromSlash(cfg.Catalog.Dir))
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return ".", nil
	}
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, dir); err == nil {
			return rel, nil
		}
	}
	return dir, nil
}
