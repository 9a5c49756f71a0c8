package pipeline

import (
	"fmt"
	"slices"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/catalogbot/catalogbot/checks/approval"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/report"
)

// Rules are what decide a change: the repository configuration and the commit its owners files are read
// from. The bot loads them once per check from the base branch's current tip (never from the merge base,
// which the author picks by branching from an old commit) and hands them to Run and to its own merge
// rules alike.
type Rules struct {
	// Commit holds the configuration and the owners files.
	Commit *object.Commit
	// Config is the parsed configuration (Default when NoConfig).
	Config *config.Config
	// NoConfig is set when the commit has no configuration file: ownership is not enforced.
	NoConfig bool
}

// LoadRules reads the configuration at rev. When the returned stage (named "config") is not Pass the
// rules could not be loaded (an unreadable or invalid file) and are nil: nothing may be decided with them.
func LoadRules(repo *gitrepo.Repo, rev string) (*Rules, report.Stage) {
	c, err := repo.Resolve(rev)
	if err != nil {
		st := stageFromErr(err)
		st.Name = "config"
		return nil, st
	}
	data, ok, err := repo.ReadFile(c, config.ConfigFile)
	if err != nil {
		st := stageFromErr(err)
		st.Name = "config"
		return nil, st
	}
	if !ok {
		return &Rules{Commit: c, Config: config.Default(), NoConfig: true}, report.Stage{Name: "config", Status: report.Pass}
	}
	cfg, ds, err := config.ParseConfig(config.ConfigFile, data)
	if err != nil {
		st := stageFromErr(err)
		st.Name, st.Diagnostics = "config", ds
		st.Summary = config.ConfigFile + " on the base branch is invalid: fix it there first"
		return nil, st
	}
	return &Rules{Commit: c, Config: cfg}, report.Stage{Name: "config", Status: report.Pass}
}

// OwnersFile reads pkg's owners file (ownersFrom) at the rules' commit: its logins, diagnostics, and
// whether it exists ("" path when the configuration names none).
func (r *Rules) OwnersFile(repo *gitrepo.Repo, pkg string) (logins []string, ok bool, err error) {
	file := r.Config.OwnersFilePath(pkg)
	if file == "" {
		return nil, false, nil
	}
	data, ok, err := repo.ReadFile(r.Commit, file)
	if err != nil || !ok {
		return nil, false, err
	}
	logins, _ = config.ParseOwnersFile(file, data)
	return logins, true, nil
}

// ApprovalPolicy says who may approve a change to packages (those its files belong to, Change.Packages;
// outside: it also changes paths no package holds): the maintainers; the owners of each changed
// package (configuration, then owners file) unless it changes more than packages; and anyone with write
// access when merge.approvers is "write". The bot and the Action both weigh approvals by it.
func (r *Rules) ApprovalPolicy(repo *gitrepo.Repo, packages []string, outside bool) (approval.Policy, error) {
	cfg := r.Config
	pol := approval.Policy{Maintainers: slices.Clone(cfg.Maintainers), WriteAccess: cfg.Merge.Approvers == config.ApproversWrite}
	if outside || len(packages) == 0 {
		return pol, nil
	}
	pol.PackageOwners = map[string][]string{}
	for _, p := range packages {
		o, err := r.PackageOwners(repo, p)
		if err != nil {
			return approval.Policy{}, err
		}
		pol.PackageOwners[p] = o
	}
	return pol, nil
}

// PackageOwners are pkg's owners: the configuration's, then its owners file's.
func (r *Rules) PackageOwners(repo *gitrepo.Repo, pkg string) ([]string, error) {
	o := slices.Clone(r.Config.Owners[pkg])
	logins, _, err := r.OwnersFile(repo, pkg)
	if err != nil {
		return nil, fmt.Errorf("reading the owners file of %s: %w", pkg, err)
	}
	return append(o, logins...), nil
}
