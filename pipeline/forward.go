package pipeline

import (
	"context"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/catalogbot/catalogbot/build"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/gitrepo"
)

// The published tag only moves forward. Every catalog image records the commit it is built from
// (build.RevisionLabel); just before the tag is moved, the revision the tag holds is read back and the
// tag is moved only when that revision is the commit being published or one of its ancestors. An older
// push processed late, a retried job, or a second publisher racing this one cannot move the tag back.

// fullSHA tells whether s is a full lowercase hexadecimal commit SHA-1 (a function, not a regexp
// compiled at init: every catalogbot run would pay for it).
func fullSHA(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// NotForwardError is CheckForward's refusal: Summary is one short line for a commit status.
type NotForwardError struct {
	Summary string
	err     error
}

func (e *NotForwardError) Error() string { return e.err.Error() }
func (e *NotForwardError) Unwrap() error { return e.err }

func notForward(category func(error) error, summary string, err error) error {
	return &NotForwardError{Summary: summary, err: category(err)}
}

// CheckForward tells whether the tag (holding an image built from revision current; "" when the image
// records none) may move to an image built from c: current must be c or one of its ancestors in repo.
// A tag holding a descendant of c is an invalid move (the tag never goes backwards); a revision that is
// missing, not in repo, or unrelated to c needs a person to decide (a usage error saying what to do).
// Refusals are *NotForwardError.
func CheckForward(repo *gitrepo.Repo, tag string, current string, c *object.Commit) error {
	want := c.Hash.String()
	switch {
	case current == want:
		return nil
	case current == "":
		return notForward(diag.UsageError, "the tag holds an image that records no source commit",
			fmt.Errorf("%s holds an image that records no source commit (label %s): refusing to replace it with %s, "+
				"since it may be newer; point the tag at an image catalogbot published, or delete it, to publish again", tag, build.RevisionLabel, short(want)))
	case !fullSHA(current):
		return notForward(diag.UsageError, "the tag's image records no commit SHA",
			fmt.Errorf("%s holds an image whose %s is %q, not a commit SHA: refusing to replace it with %s", tag,
				build.RevisionLabel, truncateQuoted(current), short(want)))
	}
	held, err := repo.Resolve(current)
	if err != nil {
		return notForward(diag.UsageError, "the tag holds "+short(current)+", which is not in the repository",
			fmt.Errorf("%s holds an image built from commit %s, which is not in the repository (a newer push not fetched yet, "+
				"or rewritten history): refusing to replace it with %s", tag, short(current), short(want)))
	}
	forward, err := held.IsAncestor(c)
	if err != nil {
		return fmt.Errorf("is %s an ancestor of %s: %w", short(current), short(want), err)
	}
	if forward {
		return nil
	}
	backward, err := c.IsAncestor(held)
	if err != nil {
		return fmt.Errorf("is %s an ancestor of %s: %w", short(want), short(current), err)
	}
	if backward {
		return notForward(diag.InvalidError, "the tag holds the newer "+short(current)+" and never moves backwards",
			fmt.Errorf("%s holds an image built from %s, which is newer than %s (its descendant): the tag never moves backwards",
				tag, short(current), short(want)))
	}
	return notForward(diag.UsageError, "the tag holds "+short(current)+", unrelated to "+short(want),
		fmt.Errorf("%s holds an image built from %s, which is neither an ancestor nor a descendant of %s (rewritten history?): "+
			"refusing to replace it; move or delete the tag by hand to publish again", tag, short(current), short(want)))
}

// forwardOnly is the build.Options.BeforeTag check of publishing c to targets: every one of them must
// move forward (or be new), so that a refused tag leaves all of them where they were.
func forwardOnly(repo *gitrepo.Repo, c *object.Commit, targets []name.Reference, opts build.Options) func(context.Context) error {
	return func(ctx context.Context) error {
		for _, target := range targets {
			current, found, err := build.ReadRevision(ctx, target, opts)
			if err != nil {
				return err
			}
			if !found {
				continue
			}
			if err := CheckForward(repo, target.String(), current, c); err != nil {
				return err
			}
		}
		return nil
	}
}

// TagRevision is the commit the image at target is built from: found is false when target does not
// exist; rev is "" when the image records none.
func TagRevision(ctx context.Context, target string, opts build.Options) (rev string, found bool, err error) {
	ref, err := parseTarget(target)
	if err != nil {
		return "", false, err
	}
	return build.ReadRevision(ctx, ref, opts)
}

func truncateQuoted(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}
