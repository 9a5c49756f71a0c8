package catalog

import (
	"fmt"
	"io/fs"

	"github.com/catalogbot/catalogbot/diag"
)

// overTotal adds up the sizes of files in order and, when they pass limit (DefaultMaxTotalSize when 0),
// returns the diagnostic for the file where they do (named under dir). Sizes come from the file system, before anything is
// read, so the answer does not depend on which worker reads what first. Under the limit it also returns
// each file's size (0 when it cannot be found), which the load uses to start the largest files first.
func overTotal(fsys fs.FS, files []string, limit int64, dir diag.Dir) (d diag.Diagnostic, over bool, sizes []int64) {
	if limit <= 0 {
		limit = DefaultMaxTotalSize
	}
	var total int64
	sizes = make([]int64, len(files))
	for i, f := range files {
		st, err := fs.Stat(fsys, f)
		if err != nil {
			continue // reported as unreadable when it is read
		}
		sizes[i] = st.Size()
		total += st.Size()
		if total > limit {
			return diag.Diagnostic{Severity: diag.Error, Check: "validate", Rule: RuleCatalogTooLarge, File: dir.File(f),
				Message: fmt.Sprintf("the catalog's files up to and including this one (%d of %d files) hold %d bytes, more than the limit of %d bytes for a whole catalog; nothing was validated", i+1, len(files), total, limit),
				Hint:    "raise limits.maxTotalBytes in .catalogbot.yaml (or --max-total-bytes) if this catalog is meant to be this large"}, true, nil
		}
	}
	return diag.Diagnostic{}, false, sizes
}

// intern returns one shared copy of short strings that repeat across the blobs of a file (package
// names in every channel and bundle, default channel names), so a catalog of a million blobs keeps one
// copy of each instead of a million. The table is bounded: past maxInterned entries strings are kept as
// they are.
// internBytes is intern for a string still in the text: no string is made when one is already kept.
func (l *fileLoader) internBytes(b []byte) string {
	if v, ok := l.strs[string(b)]; ok {
		return v
	}
	return l.intern(string(b))
}

func (l *fileLoader) intern(s string) string {
	const maxInterned, maxLen = 4096, 64
	if len(s) == 0 || len(s) > maxLen {
		return s
	}
	if v, ok := l.strs[s]; ok {
		return v
	}
	if l.strs == nil {
		l.strs = map[string]string{}
	}
	if len(l.strs) < maxInterned {
		l.strs[s] = s
	}
	return s
}
