package bot

import (
	"fmt"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/registry"
)

// RegistryCredential is one registry login in bot.yaml, for the repositories and installations it
// names only: a check, merge group or publish of any other repository never uses it. There is no
// global credential, and the bot never reads the host's docker config: a repository without an entry
// for a registry reaches it anonymously.
type RegistryCredential struct {
	// Registry is the host (and port) as image references name it ("docker.io" is Docker Hub).
	Registry string `yaml:"registry"`
	// Repositories ("owner/name", or "owner/*") and Installations (GitHub App installation IDs) the
	// credential is for; at least one of them.
	Repositories  []string `yaml:"repositories"`
	Installations []int64  `yaml:"installations"`
	// Username, and the password (or token) in PasswordEnv or PasswordFile.
	Username     string `yaml:"username"`
	PasswordEnv  string `yaml:"passwordEnv"`
	PasswordFile string `yaml:"passwordFile"`
}

// validateRegistries checks the registries section without reading secrets.
func validateRegistries(creds []RegistryCredential) []string {
	var problems []string
	for i, c := range creds {
		at := fmt.Sprintf("registries[%d]", i)
		if _, err := name.NewRegistry(c.Registry, name.StrictValidation); err != nil || c.Registry == "" {
			problems = append(problems, fmt.Sprintf("%s.registry %q is not a registry host", at, c.Registry))
		}
		if len(c.Repositories)+len(c.Installations) == 0 {
			problems = append(problems, at+": name the repositories or installations the credential is for (there are no global credentials)")
		}
		for _, r := range c.Repositories {
			owner, repo, ok := strings.Cut(r, "/")
			if !ok || owner == "" || repo == "" || strings.ContainsAny(owner, "*?[") || strings.Contains(repo, "/") {
				problems = append(problems, fmt.Sprintf("%s.repositories: %q is not owner/name or owner/*", at, r))
			}
		}
		if c.Username == "" || (c.PasswordEnv == "") == (c.PasswordFile == "") {
			problems = append(problems, at+": set username and one of passwordEnv or passwordFile")
		}
	}
	return problems
}

// registryLogin is a RegistryCredential with its password read.
type registryLogin struct {
	RegistryCredential
	host     string // normalized (name.Registry.RegistryStr)
	password string
}

// loadRegistryLogins reads the passwords of the registries section.
func loadRegistryLogins(creds []RegistryCredential) ([]registryLogin, error) {
	if p := validateRegistries(creds); len(p) > 0 {
		return nil, diag.UsageError(fmt.Errorf("bot configuration: %s", strings.Join(p, "; ")))
	}
	out := make([]registryLogin, 0, len(creds))
	for i, c := range creds {
		reg, _ := name.NewRegistry(c.Registry, name.StrictValidation)
		var pw string
		if c.PasswordFile != "" {
			data, err := os.ReadFile(c.PasswordFile)
			if err != nil {
				return nil, diag.UsageError(fmt.Errorf("registries[%d] (%s) password file: %w", i, c.Registry, err))
			}
			pw = strings.TrimRight(string(data), "\r\n")
		} else {
			pw = os.Getenv(c.PasswordEnv)
		}
		if pw == "" {
			return nil, diag.UsageError(fmt.Errorf("registries[%d] (%s): the password (passwordEnv %q, passwordFile %q) is empty", i, c.Registry, c.PasswordEnv, c.PasswordFile))
		}
		out = append(out, registryLogin{RegistryCredential: c, host: reg.RegistryStr(), password: pw})
	}
	return out, nil
}

// appliesTo tells whether the login is for the repository (owner/name) of the installation.
func (l registryLogin) appliesTo(installation int64, repo string) bool {
	if installation != 0 && slices.Contains(l.Installations, installation) {
		return true
	}
	repo = strings.ToLower(repo)
	for _, p := range l.Repositories {
		if ok, _ := path.Match(strings.ToLower(p), repo); ok {
			return true
		}
	}
	return false
}

// repoKeychain resolves the credentials of one repository's jobs: the logins configured for it, else
// anonymous. It is the only keychain the bot's registry requests use.
type repoKeychain struct{ logins []registryLogin }

func (k repoKeychain) Resolve(res authn.Resource) (authn.Authenticator, error) {
	host := res.RegistryStr()
	for _, l := range k.logins {
		if l.host == host {
			return &authn.Basic{Username: l.Username, Password: l.password}, nil
		}
	}
	return authn.Anonymous, nil
}

// keychainFor is the keychain of a job of repo under installation.
func (b *Bot) keychainFor(installation int64, repo string) authn.Keychain {
	var mine []registryLogin
	for _, l := range b.registries {
		if l.appliesTo(installation, repo) {
			mine = append(mine, l)
		}
	}
	return repoKeychain{logins: mine}
}

// remoteOptions are the registry options of this job: the job's transport (every request has a deadline,
// plain HTTP only to loopback as the checks' own transports, and a registry host that timed out once is
// not asked again in this job, whatever the stage), the bot's RemoteOptions (one setting its own
// transport replaces it), then the job's repository's credentials (last, so they win over any keychain a
// default would add).
func (jc *jobCtx) remoteOptions() []remote.Option {
	opts := []remote.Option{remote.WithTransport(registry.JobTransport(jc.b.cfg.Timeouts.RegistryRequest, jc.b.cfg.Timeouts.RegistryResponseHeader, &jc.breaker))}
	opts = append(opts, jc.b.remote...)
	return append(opts, remote.WithAuthFromKeychain(jc.b.keychainFor(jc.target.Installation, jc.target.Repo)))
}

// CheckAccessSecrets reads the status token and the registry passwords bot.yaml names, as the bot does
// when it starts (for `catalogbot serve --check`).
func (c *Config) CheckAccessSecrets() error {
	if _, err := c.Status.LoadToken(); err != nil {
		return err
	}
	_, err := loadRegistryLogins(c.Registries)
	return err
}
