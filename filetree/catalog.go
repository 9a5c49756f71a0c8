package filetree

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// IndexIgnore is the name of the files whose gitignore-style patterns exclude paths from a catalog.
const IndexIgnore = ".indexignore"

// Listing is a catalog directory's files as every reader of a catalog takes them: the loader (and so the
// validator and the owners attribution), the drift gate and the image build. One listing of a checked-out
// directory and one of the same git tree give the same verdict.
type Listing struct {
	// Dirs are the directories, "." first, in lexical order (what the image holds besides Files).
	Dirs []string
	// Files are the regular files, in lexical order, .indexignore files and what they exclude included:
	// what the image holds.
	Files []string
	// Loaded are the files a catalog load parses, in lexical order: Files minus the .indexignore files
	// and the paths their patterns exclude (opm's rules: gitignore patterns scoped to the directory of
	// their .indexignore, every .indexignore of the tree applying to every file).
	Loaded []string
	// Ignored are the files .indexignore patterns exclude from Loaded, in lexical order.
	Ignored []string
	// Refused are the entries no reader takes, in lexical order; a catalog with one is wrong.
	Refused []Refusal
}

// Why is what makes an entry refused.
type Why int

const (
	Link    Why = iota + 1 // a symbolic link
	Special                // neither a regular file nor a directory
	Name                   // a name a reader could take for another
)

// Refusal is an entry of a catalog directory that no reader takes, and why.
type Refusal struct {
	Path   string // slash path relative to the catalog directory
	Why    Why
	Reason string // a sentence fragment: "is a symbolic link (to x)"
	Hint   string
}

func (r Refusal) String() string { return r.Path + " " + r.Reason }

// ListCatalog lists the catalog in fsys (its root is the catalog directory). Symbolic links are never
// followed: fsys must report them as such (fs.ModeSymlink in its directory entries), as os.Root's file
// system and a git tree's (gitrepo.TreeFS) do. A repository's .git directory or file is skipped. An
// error is returned only when fsys cannot be read; what is wrong with the catalog is in Refused.
func ListCatalog(fsys fs.FS) (*Listing, error) {
	l := &Listing{}
	var ignores []string
	names := map[string]string{} // look-alike key -> first path with it
	fold := cases.Fold()
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("reading catalog at %s: %w", p, err)
		}
		if p != "." && d.Name() == ".git" {
			if d.IsDir() {
				return fs.SkipDir // a repository's git directory is never catalog content
			}
			return nil // a worktree's or submodule's .git file
		}
		if p != "." {
			if r, bad := refuseName(p, names, fold); bad {
				l.Refused = append(l.Refused, r)
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
		}
		switch t := d.Type(); {
		case t&fs.ModeSymlink != 0:
			l.Refused = append(l.Refused, symlinkRefusal(fsys, p))
		case d.IsDir():
			l.Dirs = append(l.Dirs, p)
		case t.IsRegular():
			l.Files = append(l.Files, p)
			if d.Name() == IndexIgnore {
				ignores = append(ignores, p)
			}
		default:
			l.Refused = append(l.Refused, Refusal{Path: p, Why: Special, Reason: fmt.Sprintf("is not a regular file (%s)", kindOf(t)),
				Hint: "a catalog holds regular files and directories only; remove it"})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	m, err := ignoreMatcher(fsys, ignores)
	if err != nil {
		return nil, err
	}
	for _, f := range l.Files {
		switch {
		case path.Base(f) == IndexIgnore:
		case m != nil && m.Match(strings.Split(f, "/"), false):
			l.Ignored = append(l.Ignored, f)
		default:
			l.Loaded = append(l.Loaded, f)
		}
	}
	return l, nil
}

// symlinkRefusal is the refusal of the symbolic link at p, naming its target when fsys can read it.
func symlinkRefusal(fsys fs.FS, p string) Refusal {
	r := Refusal{Path: p, Why: Link, Reason: "is a symbolic link",
		Hint: "a catalog holds regular files only (the image build refuses links, and readers disagree on where a link leads); replace the link with the file it points to"}
	if target, err := fs.ReadLink(fsys, p); err == nil {
		r.Reason += fmt.Sprintf(" (to %q)", target)
	}
	return r
}

// kindOf names a non-regular file's type.
func kindOf(t fs.FileMode) string {
	switch {
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeDevice != 0:
		return "a device"
	default:
		return "a special file"
	}
}

// ignoreMatcher reads the .indexignore files' patterns (each scoped to its directory, as opm reads them).
func ignoreMatcher(fsys fs.FS, ignores []string) (gitignore.Matcher, error) {
	if len(ignores) == 0 {
		return nil, nil
	}
	var patterns []gitignore.Pattern
	for _, p := range ignores {
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		var domain []string
		if dir := path.Dir(p); dir != "." {
			domain = strings.Split(dir, "/")
		}
		for _, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			patterns = append(patterns, gitignore.ParsePattern(line, domain))
		}
	}
	return gitignore.NewMatcher(patterns), nil
}

// refuseName refuses a path whose name a reader could take for another: invalid UTF-8, an invisible or
// control character, a component mixing scripts whose letters look alike (Latin and Cyrillic, say), or a
// path equal to one already seen once case and Unicode compatibility forms are folded away (a
// case-insensitive or normalising file system keeps one of the two). names holds the folded paths seen.
func refuseName(p string, names map[string]string, fold cases.Caser) (Refusal, bool) {
	const rename = "rename it: names in a catalog are told apart by their letters, not by case, Unicode forms or look-alike letters"
	if !utf8.ValidString(p) {
		return Refusal{Path: p, Why: Name, Reason: "is not valid UTF-8", Hint: rename}, true
	}
	for _, r := range p {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Variation_Selector, r) ||
			unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) {
			return Refusal{Path: p, Why: Name, Reason: fmt.Sprintf("holds the invisible character %U", r), Hint: rename}, true
		}
	}
	if scripts, mixed := mixedScripts(path.Base(p)); mixed {
		return Refusal{Path: p, Why: Name, Reason: "mixes letters of the " + strings.Join(scripts, " and ") + " scripts, which look alike", Hint: rename}, true
	}
	fold.Reset()
	key := norm.NFKC.String(fold.String(norm.NFKC.String(p)))
	if first, ok := names[key]; ok {
		return Refusal{Path: p, Why: Name, Reason: "differs from " + first + " only in case or Unicode form: a checkout on a case-insensitive or normalising file system keeps one of the two",
			Hint: rename}, true
	}
	names[key] = p
	return Refusal{}, false
}

// restrictive are the script sets a name may mix with Latin without letters that look alike (Unicode's
// "highly restrictive" level, UTS #39).
var restrictive = [][]string{{"Han", "Hiragana", "Katakana"}, {"Han", "Bopomofo"}, {"Han", "Hangul"}}

// mixedScripts tells whether name's letters come from scripts that do not mix (UTS #39's highly
// restrictive level), and which.
func mixedScripts(name string) ([]string, bool) {
	var scripts []string
	for _, r := range name {
		if r < utf8.RuneSelf {
			if unicode.IsLetter(r) && !slices.Contains(scripts, "Latin") {
				scripts = append(scripts, "Latin")
			}
			continue
		}
		if !unicode.IsLetter(r) && !unicode.IsMark(r) && !unicode.IsNumber(r) {
			continue
		}
		for _, s := range scriptNames() {
			if unicode.Is(unicode.Scripts[s], r) {
				if s != "Common" && s != "Inherited" && !slices.Contains(scripts, s) {
					scripts = append(scripts, s)
				}
				break
			}
		}
	}
	if len(scripts) <= 1 {
		return nil, false
	}
	others := slices.DeleteFunc(slices.Clone(scripts), func(s string) bool { return s == "Latin" })
	for _, set := range restrictive {
		if !slices.ContainsFunc(others, func(s string) bool { return !slices.Contains(set, s) }) {
			return nil, false
		}
	}
	slices.Sort(scripts)
	return scripts, true
}

// scriptNames are unicode.Scripts' names in order, so a rune's script is looked up the same way each
// time (computed on first use: nothing at start-up).
var scriptNames = sync.OnceValue(func() []string {
	return slices.Sorted(maps.Keys(unicode.Scripts))
})

// LinkOn is the first of the paths leading to name under root (its directories, then name itself) that
// is a symbolic link, if one is: what ListCatalog refuses in a catalog, for a reader of one catalog file.
func LinkOn(root *os.Root, name string) (string, bool) {
	parts := strings.Split(name, "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		if fi, err := root.Lstat(filepath.FromSlash(p)); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return p, true
		}
	}
	return "", false
}
