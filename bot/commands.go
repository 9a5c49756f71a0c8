package bot

import (
	"context"
	"fmt"
	"strings"

	"github.com/catalogbot/catalogbot/bot/gitcache"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/pipeline/owners"
)

// Cmd is one slash command of a comment.
type Cmd struct {
	Name string `json:"name"` // retest, hold, unhold, approve
	Arg  string `json:"arg,omitempty"`
}

// parseCommands finds the commands of a comment: lines that start with /retest, /hold, /unhold or
// /approve ("/hold cancel" is /unhold, as in Prow). Quoted lines and code blocks are skipped.
func parseCommands(body string) []Cmd {
	var out []Cmd
	fence := false
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "```") {
			fence = !fence
			continue
		}
		if fence || !strings.HasPrefix(line, "/") {
			continue
		}
		fields := strings.Fields(line)
		name := strings.ToLower(strings.TrimPrefix(fields[0], "/"))
		arg := ""
		if len(fields) > 1 {
			arg = strings.ToLower(fields[1])
		}
		switch {
		case name == "hold" && arg == "cancel":
			out = append(out, Cmd{Name: "unhold"})
		case name == "retest", name == "hold", name == "unhold", name == "approve":
			out = append(out, Cmd{Name: name, Arg: arg})
		}
	}
	return out
}

// commands carries out a comment's commands. Every command gets a reaction: +1 when done, -1 with a
// reply saying why when refused.
func (jc *jobCtx) commands(ctx context.Context) error {
	pr, err := jc.gh.PullRequest(ctx, jc.repo, jc.task.PR)
	if err != nil {
		return err
	}
	user := jc.task.Sender
	var refusals []string
	accepted := false
	evaluate, retest := false, false
	var role string
	roleOf := func() (string, error) {
		if role == "" {
			r, err := jc.gh.Permission(ctx, jc.repo, user)
			if err != nil {
				return "", err
			}
			role = r
		}
		return role, nil
	}
	for _, c := range jc.task.Commands {
		if pr.State != "open" {
			refusals = append(refusals, fmt.Sprintf("`/%s`: the pull request is %s", c.Name, pr.State))
			continue
		}
		switch c.Name {
		case "retest", "hold", "unhold":
			r, err := roleOf()
			if err != nil {
				return err
			}
			if !strings.EqualFold(user, pr.Author) && !mayTriage(r) {
				refusals = append(refusals, fmt.Sprintf("`/%s`: @%s is neither the author nor a collaborator with triage access", c.Name, user))
				continue
			}
			switch c.Name {
			case "retest":
				retest = true
			case "hold":
				if err := jc.gh.AddLabel(ctx, jc.repo, pr.Number, jc.b.cfg.Checks.HoldLabel); err != nil {
					return err
				}
				evaluate = true
			case "unhold":
				if err := jc.gh.RemoveLabel(ctx, jc.repo, pr.Number, jc.b.cfg.Checks.HoldLabel); err != nil {
					return err
				}
				evaluate = true
			}
			accepted = true
		case "approve":
			if strings.EqualFold(user, pr.Author) {
				refusals = append(refusals, "`/approve`: authors cannot approve their own pull request")
				continue
			}
			ok, err := jc.isOwner(ctx, pr.Number, pr.HeadSHA, pr.BaseRef, user)
			if err != nil {
				return err
			}
			if !ok {
				refusals = append(refusals, fmt.Sprintf("`/approve`: @%s is not a maintainer or an owner of a package this pull request changes", user))
				continue
			}
			if err := jc.b.store.addApproval(ctx, jc.task.Repo, pr.Number, user); err != nil {
				return err
			}
			accepted, evaluate = true, true
		}
	}
	if accepted {
		if err := jc.gh.React(ctx, jc.repo, jc.task.CommentID, "+1"); err != nil {
			return err
		}
	}
	if len(refusals) > 0 {
		if err := jc.gh.React(ctx, jc.repo, jc.task.CommentID, "-1"); err != nil {
			return err
		}
		body := "@" + user + " not done:\n- " + strings.Join(refusals, "\n- ")
		if _, err := jc.gh.CreateComment(ctx, jc.repo, pr.Number, body); err != nil {
			return err
		}
	}
	// Follow-up jobs last: they may start at once.
	if retest {
		t := Task{Installation: jc.task.Installation, Repo: jc.task.Repo, PR: pr.Number, Reason: "/retest by " + user}
		if err := jc.enqueue(ctx, kindCheck, fmt.Sprintf("command:%d:retest", jc.task.CommentID), t); err != nil {
			return err
		}
	}
	if evaluate && !retest { // a check ends with an evaluation anyway
		t := Task{Installation: jc.task.Installation, Repo: jc.task.Repo, PR: pr.Number, Reason: "command by " + user}
		return jc.enqueue(ctx, kindEvaluate, fmt.Sprintf("command:%d:evaluate", jc.task.CommentID), t)
	}
	return nil
}

func mayTriage(role string) bool {
	switch role {
	case "admin", "maintain", "write", "triage":
		return true
	}
	return false
}

// isOwner reports whether login is a maintainer, or an owner of a package the pull request changes, under
// the base branch's configuration (teams resolved with GitHub).
func (jc *jobCtx) isOwner(ctx context.Context, number int, head, baseRef, login string) (bool, error) {
	dir, err := jc.fetch(ctx, nil, number) // the base branch tip must be current
	if err != nil {
		return false, err
	}
	tip, err := gitcache.Resolve(dir, gitcache.BranchRef(baseRef))
	if err != nil {
		return false, err
	}
	cfg, err := readConfig(dir, tip)
	if err != nil {
		return false, err
	}
	candidates := append([]string{}, cfg.Maintainers...)
	base, err := gitcache.MergeBase(dir, tip, head)
	if err != nil {
		return false, err
	}
	pkgs, _, err := gitcache.TouchedTopDirs(ctx, dir, base, head, cfg.Catalog.Dir)
	if err != nil {
		return false, err
	}
	repo, err := pipeline.OpenRepo(dir)
	if err != nil {
		return false, err
	}
	baseCommit, err := repo.Resolve(tip)
	if err != nil {
		return false, err
	}
	for pkg := range pkgs {
		candidates = append(candidates, cfg.Owners[pkg]...)
		if f := cfg.OwnersFilePath(pkg); f != "" {
			if data, ok, err := repo.ReadFile(baseCommit, f); err == nil && ok {
				logins, _ := owners.ParseOwnersFile(f, data)
				candidates = append(candidates, logins...)
			}
		}
	}
	m := &membership{gh: jc.gh, cache: map[string]bool{}}
	for _, c := range candidates {
		org, team, isTeam := strings.Cut(c, "/")
		if !isTeam {
			if strings.EqualFold(c, login) {
				return true, nil
			}
			continue
		}
		ok, err := m.IsMember(ctx, strings.ToLower(org), strings.ToLower(team), strings.ToLower(login))
		if err != nil {
			return false, err
		}
		if ok {
			return true, nil
		}
	}
	return false, nil
}
