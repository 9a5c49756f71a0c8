// Package pipeline is the one code path every front-end runs: given a change to a catalog repository (a
// base and a head revision) it runs the stages owners -> render -> validate -> graph -> images -> smoke and
// returns one Report; publish builds and pushes the catalog image after a merge. The CLI, the GitHub Action
// and the bot only gather input and render the Report.
package pipeline

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/checks/validate"
	"github.com/catalogbot/catalogbot/internal/diag"
	"github.com/catalogbot/catalogbot/pipeline/report"
)

// Input is one pipeline run: a pull request (or any base..head range) of a local repository.
type Input struct {
	// Repo is the repository (work tree or bare) holding both revisions.
	Repo *Repo
	// Base and Head are revisions (SHA, branch, tag). Config and owners are read from Base.
	Base, Head string
	// Author is the login of the change's author; Approvers are logins that approved it (reviews).
	Author    string
	Approvers []string
	// Membership answers org/team questions for owners; nil treats teams as having no members.
	Membership Membership
	// RemoteOptions are used for every registry request (auth, transport).
	RemoteOptions []remote.Option
	// Limits override the configuration's limits field by field (zero fields keep the configuration's).
	Limits validate.Limits
	// SkipImages skips the images stage (offline use).
	SkipImages bool
	// Progress receives one line per stage start (stderr in the CLI); nil for none.
	Progress io.Writer
	// Smoke says where smoke installs run when .catalogbot.yaml enables them; nil means this front-end
	// has no cluster, and an enabled smoke stage reports that as an error.
	Smoke *SmokeInput
}

// Run runs the pull-request stages and returns the report. The error is only for failures to run at all
// (unreadable repository, bad revisions); everything about the change itself is in the report.
func Run(ctx context.Context, in Input) (*report.Report, error) {
	base, err := in.Repo.Resolve(in.Base)
	if err != nil {
		return nil, err
	}
	head, err := in.Repo.Resolve(in.Head)
	if err != nil {
		return nil, err
	}
	r := &report.Report{
		Title:   fmt.Sprintf("change %s..%s by %s", short(base.Hash.String()), short(head.Hash.String()), orNone(in.Author)),
		Outputs: map[string]string{"head_sha": head.Hash.String()},
	}
	st := &state{in: in, base: base, head: head}
	cfgStage := st.loadConfig(ctx)
	if cfgStage.Status != report.Pass {
		r.Stages = append(r.Stages, cfgStage)
		return r, nil
	}
	dir, cleanup, err := in.Repo.Checkout(ctx, head)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	st.headDir = dir
	for _, stage := range []struct {
		name string
		run  func(context.Context) report.Stage
	}{
		{"owners", st.owners},
		{"render", st.render},
		{"validate", st.validate},
		{"graph", st.graph},
		{"images", st.images},
		{"smoke", st.smoke},
	} {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if in.Progress != nil {
			fmt.Fprintf(in.Progress, "catalogbot: %s...\n", stage.name)
		}
		start := time.Now()
		s := stage.run(ctx)
		s.Name = stage.name
		s.Duration = time.Since(start)
		s.Diagnostics = diag.Sort(s.Diagnostics)
		r.Stages = append(r.Stages, s)
	}
	return r, nil
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// stageFromDiags makes a stage whose status follows its diagnostics.
func stageFromDiags(summary string, ds []diag.Diagnostic) report.Stage {
	s := report.Stage{Status: report.Pass, Summary: summary, Diagnostics: ds}
	if diag.HasErrors(ds) {
		s.Status = report.Fail
	}
	return s
}

// stageFromErr makes a stage for an error that kept a stage from running, by the error's category.
func stageFromErr(err error) report.Stage {
	s := report.Stage{Err: err.Error()}
	switch diag.CategoryOf(err) {
	case diag.Usage:
		s.Status = report.ActionRequired
	case diag.Invalid:
		s.Status = report.Fail
	default:
		s.Status = report.Error
	}
	return s
}
