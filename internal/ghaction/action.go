// Package ghaction is the GitHub Action front-end: it reads the workflow's event and environment, runs
// the pipeline for a pull request (and merges it when asked and every rule holds) or publishes the
// default branch on a push (and, when asked, releases the bundles it merged: release.go), and writes the
// step summary, annotations and outputs. action.yml only gets catalogbot (the release binary of its ref,
// or a build) and calls `catalogbot action`.
package ghaction

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/report"
)

// Env is the part of the Actions environment the action reads (os.Getenv in production, a map in tests).
type Env func(string) string

// event is the subset of a pull_request (or pull_request_target) payload the action needs.
type event struct {
	Action      string `json:"action"`
	PullRequest *struct {
		Number int `json:"number"`
		User   struct {
			Login string `json:"login"`
		} `json:"user"`
		Base struct {
			SHA string `json:"sha"`
			Ref string `json:"ref"`
		} `json:"base"`
		Title string `json:"title"`
		Head  struct {
			SHA string `json:"sha"`
			Ref string `json:"ref"`
		} `json:"head"`
		Draft bool `json:"draft"`
	} `json:"pull_request"`
	Repository struct {
		FullName string `json:"full_name"`
	} `json:"repository"`
}

// maxEvent bounds the event payload read from GITHUB_EVENT_PATH.
const maxEvent = 25 << 20

// Options are the action's inputs.
type Options struct {
	RepoDir    string
	SkipImages bool
	// Merge merges a pull request when the merge decision (checks/merge, the bot's too) finds every
	// condition met (see merge.go).
	Merge bool
	// Release releases, on a push to the default branch, the bundle directories the push added with a
	// release-config.yaml (release.go). It does nothing on pull requests.
	Release bool
	// Smoke is the smoke stage's cluster (a kind cluster created on the runner); nil when the workflow
	// gives none (a catalog with smoke.enabled then ends action_required).
	Smoke *pipeline.SmokeInput
}

// Run runs the front-end for the workflow's event: the pull request's checks (and, with Merge, the
// merge) on pull_request and pull_request_target, the publish of the default branch on push (and, with
// Release, the release of the bundle directories the push added). stdout
// gets the annotations and the text report.
func Run(ctx context.Context, env Env, stdout, progress io.Writer, o Options) (*report.Report, error) {
	name := env("GITHUB_EVENT_NAME")
	if name != "pull_request" && name != "pull_request_target" && name != "push" {
		return nil, diag.UsageError(fmt.Errorf("catalogbot action runs on pull_request, pull_request_target and push events, not %q", name))
	}
	path := env("GITHUB_EVENT_PATH")
	data, err := readPayload(path)
	if err != nil {
		return nil, err
	}
	var r *report.Report
	if name == "push" {
		r, err = runPush(ctx, env, data, path, o)
	} else {
		r, err = runPull(ctx, env, data, path, progress, o)
	}
	if err != nil {
		return nil, emitError(env, err)
	}
	return r, emit(env, stdout, r)
}

// emitError writes what a run that could not reach its verdict (GitHub or a registry unreachable, a
// repository without the revisions) still owes the workflow: verdict=error in the outputs and the error
// in the step summary, so a later step or a required check sees why. It returns err.
func emitError(env Env, err error) error {
	if f := env("GITHUB_STEP_SUMMARY"); f != "" {
		var b strings.Builder
		b.WriteString("## 🔥 catalogbot: error\n\nThe run stopped before its verdict:\n\n")
		for _, line := range strings.Split(err.Error(), "\n") {
			b.WriteString("    " + line + "\n") // a code block: the message is text, never markdown
		}
		_ = appendFile(f, []byte(b.String()))
	}
	if f := env("GITHUB_OUTPUT"); f != "" {
		_ = appendFile(f, formatOutputs(map[string]string{"verdict": string(report.Error)}))
	}
	return err
}

// runPull runs the pipeline on the merge of the pull request's head into its base branch's tip (the tip
// now, as GitHub has it, when there is a token; the event's base otherwise), with the approvals given on
// the head commit and team membership read with the workflow's token when there is one.
func runPull(ctx context.Context, env Env, data []byte, path string, progress io.Writer, o Options) (*report.Report, error) {
	ev, err := parseEvent(data, path)
	if err != nil {
		return nil, err
	}
	repo, err := gitrepo.Open(o.RepoDir)
	if err != nil {
		return nil, err
	}
	pr := ev.PullRequest
	in := pipeline.Input{Repo: repo, Author: pr.User.Login, SkipImages: o.SkipImages, Smoke: o.Smoke, Observer: pipeline.TextProgress(progress)}
	gh, err := newGitHub(env)
	if err != nil {
		return nil, err
	}
	tip := pr.Base.SHA
	var ghRepo ghclient.Repo
	if gh != nil {
		if ghRepo, err = ghclient.ParseRepo(ev.Repository.FullName); err != nil {
			return nil, diag.UsageError(err)
		}
		if tip, err = gh.BranchSHA(ctx, ghRepo, pr.Base.Ref); err != nil {
			return nil, diag.InfraError(err)
		}
	}
	// the change is prepared once: what lands (the merge into the tip), its files, packages and layout
	c := checked{tip: tip}
	c.change, c.configError, err = prepare(ctx, repo, tip, pr.Head.SHA)
	if err != nil {
		return nil, fmt.Errorf("pull request #%d (%s into %s): %w (check out with fetch-depth: 0 so both revisions are present)", pr.Number, short(pr.Head.SHA), short(tip), err)
	}
	if in.Change = c.change; in.Change == nil {
		in.Base, in.Head = tip, pr.Head.SHA // the tip's configuration is invalid: the config stage says why
	}
	if gh != nil {
		if in.Approvers, err = approvers(ctx, gh, ghRepo, pr.Number, pr.User.Login, pr.Head.SHA); err != nil {
			return nil, diag.InfraError(err)
		}
		in.Membership = teams{gh}
	}
	r, err := pipeline.Run(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("pull request #%d (%s into %s): %w (check out with fetch-depth: 0 so both revisions are present)", pr.Number, short(pr.Head.SHA), short(tip), err)
	}
	r.Title = fmt.Sprintf("%s#%d by %s at %s", ev.Repository.FullName, pr.Number, pr.User.Login, short(pr.Head.SHA))
	if o.Merge {
		if gh == nil {
			return nil, diag.UsageError(fmt.Errorf("merge: true needs a token that may merge: pass github-token"))
		}
		c.approvers = in.Approvers
		st, sha := mergeIfReady(ctx, gh, ghRepo, c, ev, r)
		r.Stages = append(r.Stages, st)
		r.Outputs["merged"] = fmt.Sprint(sha != "")
		if sha != "" {
			r.Outputs["merge_sha"] = sha
		}
	}
	return r, nil
}

// prepare loads the rules of tip and prepares the merge of head into it; nil and why when tip's
// configuration is invalid (nothing can be decided under it).
func prepare(ctx context.Context, repo *gitrepo.Repo, tip, head string) (*pipeline.Change, string, error) {
	rules, st := pipeline.LoadRules(repo, tip)
	if rules == nil {
		if st.Err == "" {
			return nil, st.Summary, nil
		}
		return nil, st.Err, nil
	}
	ch, err := pipeline.PrepareMerge(ctx, repo, rules, tip, head)
	return ch, "", err
}

// emit writes the annotations, the text report, the step summary and the outputs.
func emit(env Env, stdout io.Writer, r *report.Report) error {
	if err := report.WriteGitHub(stdout, r, ""); err != nil {
		return err
	}
	if err := report.WriteTextNoCommands(stdout, r); err != nil {
		return err
	}
	if f := env("GITHUB_STEP_SUMMARY"); f != "" {
		if err := appendFile(f, []byte(report.Markdown(r, 0))); err != nil {
			return err
		}
	}
	if f := env("GITHUB_OUTPUT"); f != "" {
		outs := map[string]string{"verdict": string(r.Verdict())}
		for k, v := range r.Outputs {
			outs[k] = v
		}
		if err := appendFile(f, formatOutputs(outs)); err != nil {
			return err
		}
	}
	return nil
}

func readPayload(path string) ([]byte, error) {
	if path == "" {
		return nil, diag.UsageError(fmt.Errorf("GITHUB_EVENT_PATH is not set: run catalogbot action inside a GitHub Actions workflow"))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, diag.UsageError(fmt.Errorf("read event payload: %w", err))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxEvent+1))
	if err != nil {
		return nil, fmt.Errorf("read event payload %s: %w", path, err)
	}
	if len(data) > maxEvent {
		return nil, diag.UsageError(fmt.Errorf("event payload %s is larger than %d bytes", path, maxEvent))
	}
	return data, nil
}

func parseEvent(data []byte, path string) (*event, error) {
	var ev event
	if err := json.Unmarshal(data, &ev); err != nil {
		return nil, diag.UsageError(fmt.Errorf("event payload %s: %w", path, err))
	}
	if ev.PullRequest == nil || ev.PullRequest.Base.SHA == "" || ev.PullRequest.Head.SHA == "" {
		return nil, diag.UsageError(fmt.Errorf("event payload %s has no pull_request with base and head SHAs", path))
	}
	return &ev, nil
}

// formatOutputs writes outputs in the multi-line-safe form, with a random delimiter no value contains.
func formatOutputs(outs map[string]string) []byte {
	keys := make([]string, 0, len(outs))
	for k := range outs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		delim := randomDelimiter()
		for strings.Contains(outs[k], delim) {
			delim = randomDelimiter()
		}
		fmt.Fprintf(&b, "%s<<%s\n%s\n%s\n", k, delim, outs[k], delim)
	}
	return []byte(b.String())
}

func randomDelimiter() string {
	var buf [12]byte
	_, _ = rand.Read(buf[:])
	return "ghadelimiter_" + hex.EncodeToString(buf[:])
}

func appendFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
