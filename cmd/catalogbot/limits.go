package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/checks/validate"
	"github.com/catalogbot/catalogbot/config"
)

// limitFlags are the --max-* flags of the verbs that validate: they override .catalogbot.yaml's limits.
type limitFlags struct {
	fileBytes, totalBytes byteSize
	perRule               int
}

func (f *limitFlags) add(cmd *cobra.Command) {
	cmd.Flags().Var(&f.fileBytes, "max-file-bytes", "refuse catalog files larger than this (e.g. 64MiB; default 256MiB or limits.maxFileBytes)")
	cmd.Flags().Var(&f.totalBytes, "max-total-bytes", "refuse catalogs larger than this in total (default 1GiB or limits.maxTotalBytes)")
	cmd.Flags().IntVar(&f.perRule, "max-diagnostics", 0, "keep at most this many diagnostics per rule and count the rest (default 100 or limits.maxDiagnosticsPerRule; -1 keeps all)")
}

// limits are the flags' limits over cfg's (nil: defaults).
func (f *limitFlags) limits(cfg *config.Config) validate.Limits {
	var l validate.Limits
	if cfg != nil {
		l = validate.Limits{MaxFileBytes: int64(cfg.Limits.MaxFileBytes), MaxTotalBytes: int64(cfg.Limits.MaxTotalBytes),
			MaxPerRule: cfg.Limits.MaxDiagnosticsPerRule}
	}
	if f.fileBytes != 0 {
		l.MaxFileBytes = int64(f.fileBytes)
	}
	if f.totalBytes != 0 {
		l.MaxTotalBytes = int64(f.totalBytes)
	}
	if f.perRule != 0 {
		l.MaxPerRule = f.perRule
	}
	return l
}

// override is the flags alone, for the pipeline (which applies them over the base's configuration).
func (f *limitFlags) override() validate.Limits { return f.limits(nil) }

// byteSize is a flag value in bytes, written plainly or with a KiB/MiB/GiB (or KB/MB/GB) suffix.
type byteSize int64

func (b *byteSize) String() string {
	if *b == 0 {
		return ""
	}
	return strconv.FormatInt(int64(*b), 10)
}

func (b *byteSize) Type() string { return "bytes" }

func (b *byteSize) Set(s string) error {
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}}
	num, mult := strings.TrimSpace(s), int64(1)
	for _, u := range units {
		if n, ok := strings.CutSuffix(num, u.suffix); ok {
			num, mult = strings.TrimSpace(n), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return fmt.Errorf("%q is not a positive size in bytes (e.g. 1048576, 64MiB, 2GiB)", s)
	}
	*b = byteSize(n * mult)
	return nil
}

// boundMemoryTo sets Go's soft memory limit for a run over catalogs of catalogBytes in all (told by
// pipeline.Tree.Sized or validate.Change.Sized) to a small constant plus a few times that, unless
// GOMEMLIMIT is set: the garbage collector then works harder instead of letting the heap grow to twice
// what is live, so peak memory follows the input (a hostile file of 700,000 tiny blobs holds four to
// five times its size live). Real catalogs, whose bundles are mostly inline objects dropped after
// checking, stay far below the limit and pay nothing for it.
func boundMemoryTo(catalogBytes int64) {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimitFor(catalogBytes))
	}
}

// memoryLimitFor is 128 MiB plus three times the catalog's bytes.
func memoryLimitFor(catalogBytes int64) int64 {
	return 128<<20 + 3*catalogBytes
}
