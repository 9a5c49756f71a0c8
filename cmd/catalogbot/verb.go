package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"
)

// Every verb is built as gh builds its commands: the command line parses into the verb's options, and a
// run function does the work with them. newXCmd takes the run function (nil: the real one), so a test
// checks what a command line parses into without doing the work, and the run function can be called
// with options a test builds.

// streams are where a verb writes: its report or result, and progress and messages.
type streams struct {
	out, err io.Writer
}

func streamsOf(cmd *cobra.Command) streams {
	return streams{out: cmd.OutOrStdout(), err: cmd.ErrOrStderr()}
}

// runner is a verb's run function.
type runner[O any] func(ctx context.Context, o *O) error

// orDefault is runF, or def when runF is nil.
func orDefault[O any](runF, def runner[O]) runner[O] {
	if runF != nil {
		return runF
	}
	return def
}

// optionalArg is the first of args, or "" when there is none.
func optionalArg(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}
