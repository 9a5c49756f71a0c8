// Package pipeline is the one code path every front-end runs: given a change to a catalog repository (a
// base and a head revision) it runs the stages owners -> render -> validate -> graph -> images -> smoke and
// returns one Report; publish builds and pushes the catalog image after a merge. The CLI, the GitHub Action
// and the bot only gather input and render the Report.
package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/checks/validate"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/report"
)

// Input is one pipeline run: a pull request (or any base..head range) of a local repository.
type Input struct {
	// Repo is the repository (work tree or bare) holding both revisions.
	Repo *gitrepo.Repo
	// Base and Head are revisions (SHA, branch, tag): the change is Base..Head.
	Base, Head string
	// Change is the prepared change (PrepareMerge: the merge of a pull request's head into its base
	// branch's tip, what the front-ends with a pull request run); when set, Repo, Base, Head and Rules are
	// its own and ignored here.
	Change *Change
	// Rules are the configuration and owners files that decide the range Base..Head (LoadRules); nil
	// loads them from Base.
	Rules *Rules
	// Author is the login of the change's author; Approvers are logins that approved it (reviews).
	Author    string
	Approvers []string
	// Release names the package when the front-end vouches that the change is its own release pull
	// request of that package (the App opened it and its head is the release commit the App pushed).
	// Under release.autoMerge of the base configuration, the owners stage lets it change that package's
	// templates and catalogs, and nothing else (Change.ReleaseOnly); "" for every other change.
	Release string
	// Promotion names the package and the catalog when the front-end vouches that the change is its own
	// promotion pull request of that package into that catalog, of a package whose strategy is always
	// (the App opened it and its head is the commit the App pushed). Under promotion.autoMerge of the base
	// configuration, the owners stage lets it change that package's ci.yaml and its directory in that
	// catalog, and nothing else (Change.PromotionOnly); zero for every other change.
	Promotion PromotionGrant
	// Membership answers org/team questions for owners; nil treats teams as having no members.
	Membership Membership
	// RemoteOptions are used for every registry request (auth, transport).
	RemoteOptions []remote.Option
	// Limits override the configuration's limits field by field (zero fields keep the configuration's).
	Limits validate.Limits
	// SkipImages skips the images stage (offline use).
	SkipImages bool
	// Observer is told of each stage's start, progress lines and result (TextProgress prints them); nil
	// for none.
	Observer Observer
	// Smoke says where smoke installs run when .catalogbot.yaml enables them; nil means this front-end
	// has no cluster, and an enabled smoke stage reports that as an error.
	Smoke *SmokeInput
	// StageTimeout bounds each stage (0: no bound). A stage that runs out is an infrastructure error.
	StageTimeout time.Duration
}

// PromotionGrant is a package's promotion into a catalog (by name).
type PromotionGrant struct {
	Package, Catalog string
}

// Run runs the pull-request stages and returns the report. The error is only for failures to run at all
// (unreadable repository, bad revisions); everything about the change itself is in the report.
func Run(ctx context.Context, in Input) (*report.Report, error) {
	var base, head *object.Commit
	if ch := in.Change; ch != nil {
		in.Repo, base, head = ch.Repo, ch.Base, ch.Head
	} else {
		var err error
		if base, err = in.Repo.Resolve(in.Base); err != nil {
			return nil, err
		}
		if head, err = in.Repo.Resolve(in.Head); err != nil {
			return nil, err
		}
	}
	r := &report.Report{
		Title:   fmt.Sprintf("change %s..%s by %s", short(base.Hash.String()), short(head.Hash.String()), orNone(in.Author)),
		Outputs: map[string]string{"head_sha": head.Hash.String()},
	}
	if ch := in.Change; ch != nil && ch.Result == nil {
		r.Stages = append(r.Stages, ch.conflictStage())
		return r, nil
	}
	st := &state{in: in}
	cfgStage := st.loadConfig(ctx)
	if cfgStage.Status != report.Pass {
		r.Stages = append(r.Stages, cfgStage)
		return r, nil
	}
	dir, cleanup, err := in.Repo.Checkout(ctx, st.head)
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
		{"policy", st.policy},
		{"graph", st.graph},
		{"images", st.images},
		{"smoke", st.smoke},
	} {
		if stage.name == "policy" && !st.cfg.Policy.Enabled() {
			continue // the default preset, none: no policy stage in the report
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if in.Observer != nil {
			in.Observer.StageStarted(stage.name)
		}
		start := time.Now()
		s := runStage(ctx, stage.name, in.StageTimeout, stage.run)
		st.closeLines()
		s.Name = stage.name
		s.Duration = time.Since(start)
		s.Diagnostics = diag.Sort(s.Diagnostics)
		r.Stages = append(r.Stages, s)
		if in.Observer != nil {
			in.Observer.StageDone(s)
		}
	}
	return r, nil
}

// runStage runs one stage within timeout (when positive). A stage that runs out is an error of the
// infrastructure (a registry or cluster that does not answer), whatever it reported on its way out.
func runStage(ctx context.Context, name string, timeout time.Duration, run func(context.Context) report.Stage) report.Stage {
	if timeout <= 0 {
		return run(ctx)
	}
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	s := run(sctx)
	if sctx.Err() != nil && ctx.Err() == nil {
		msg := fmt.Sprintf("the %s stage did not finish within its %s deadline: an infrastructure failure, not this change's", name, timeout)
		if s.Err != "" {
			msg += ": " + s.Err
		}
		s.Status, s.Err = report.Error, msg
	}
	return s
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// stageFromDiags makes a stage whose status follows its diagnostics (report.StatusOf).
func stageFromDiags(summary string, ds []diag.Diagnostic) report.Stage {
	return report.Stage{Status: report.StatusOf(ds, nil), Summary: summary, Diagnostics: ds}
}

// stageFromErr makes a stage for an error that kept a stage from running, by the error's category
// (report.StatusOf).
func stageFromErr(err error) report.Stage {
	return report.Stage{Status: report.StatusOf(nil, err), Err: err.Error()}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
