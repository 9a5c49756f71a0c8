package pipeline

import (
	"github.com/go-git/go-git/v5/plumbing/object"

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
