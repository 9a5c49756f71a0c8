package bot

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/catalogbot/catalogbot/internal/githubtest"
	"github.com/catalogbot/catalogbot/internal/registrytest"
)

// checkOutput is everything a check run shows: title, summary and annotations.
func checkOutput(cr githubtest.CheckRun) string {
	var b strings.Builder
	b.WriteString(cr.Output.Title + "\n" + cr.Output.Summary + "\n")
	for _, a := range cr.Output.Annotations {
		fmt.Fprintf(&b, "%s:%d %s %s\n", a.Path, a.StartLine, a.Title, a.Message)
	}
	return b.String()
}

// hostCatalog writes, outside any checkout, a file-based catalog of foo-operator whose bundle name is a
// secret of the bot's host, and returns its directory.
func hostCatalog(t *testing.T) (dir, secret string) {
	dir = filepath.Join(t.TempDir(), "host-data")
	secret = "foo-operator.v9.9.9-host-secret"
	pkg := fbc("foo-operator", func(string) string { return "registry.example.com/foo@sha256:" + strings.Repeat("a", 64) }, "9.9.9")
	pkg = strings.ReplaceAll(pkg, "foo-operator.v9.9.9", secret)
	if err := os.MkdirAll(filepath.Join(dir, "foo-operator"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "foo-operator", "catalog.json"), []byte(pkg), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, secret
}

const refsRepoConfig = repoConfig + "references:\n  file: catalog.yaml\n"

// runRefsAttack opens pull request n (head committed by commit) against a base with a references config
// and returns its finished check run.
func runRefsAttack(h *harness, n int, commit func(main string) string) githubtest.CheckRun {
	h.t.Helper()
	return runRefsAttackOn(h, refsRepoConfig, n, commit)
}

func runRefsAttackOn(h *harness, config string, n int, commit func(main string) string) githubtest.CheckRun {
	h.t.Helper()
	main := h.seedMain(config)
	head := commit(main)
	h.openPR(n, "mallory", head, main)
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(n, "mallory", head, main, nil))
	h.waitIdle()
	runs := h.gh.CheckRuns(repoFull)
	if len(runs) != 1 || runs[0].Status != "completed" {
		h.t.Fatalf("check runs: %+v", runs)
	}
	return runs[0]
}

// A pull request's references config naming a directory of the bot's host, by absolute path or by ../,
// gets a failed check whose render stage says, on the config's line, that the directory is outside the
// repository; nothing of the host's catalog shows in the check run (the drift diff would echo it), on
// the run's page or in the logs.
func TestAttackLocalReferenceEscapesCheckout(t *testing.T) {
	host, secret := hostCatalog(t)
	rel, err := filepath.Rel(os.TempDir(), host)
	if err != nil {
		t.Fatal(err)
	}
	for name, image := range map[string]string{"absolute": host, "dot-dot": "../" + filepath.ToSlash(rel)} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			cr := runRefsAttack(h, 2, func(main string) string {
				refs := "name: catalog\nreferences:\n- name: foo-operator\n  image: " + image + "\n"
				return h.git.Commit("mallory/refs", main, "mallory", "render from the host", map[string]string{"catalog.yaml": refs})
			})
			out := checkOutput(cr)
			if cr.Conclusion != "failure" {
				t.Errorf("conclusion %s:\n%s", cr.Conclusion, out)
			}
			for _, want := range []string{"catalog.yaml:3 ", "is outside the repository"} {
				if !strings.Contains(out, want) {
					t.Errorf("the check run lacks %q:\n%s", want, out)
				}
			}
			page := h.get(strings.TrimPrefix(cr.DetailsURL, publicURL))
			for what, text := range map[string]string{"check run": out, "run page": page, "logs": h.logs.String()} {
				if strings.Contains(text, secret) {
					t.Errorf("the %s shows the host's catalog (%s)", what, secret)
				}
			}
		})
	}
}

// The same through symlinks committed in the pull request: a directory symlink to the host's catalog
// (absolute, and relative with ../), and a catalog file symlinked out of a real directory. Each is an
// error on its reference's line and nothing of the host's catalog is read.
func TestAttackSymlinkReference(t *testing.T) {
	host, secret := hostCatalog(t)
	h := newHarness(t)
	cr := runRefsAttack(h, 2, func(main string) string {
		g := h.git
		g.Git("checkout", "-q", "-B", "mallory/links", main)
		rel, err := filepath.Rel(filepath.Join(g.Dir, "bundles"), host)
		if err != nil {
			t.Fatal(err)
		}
		for link, target := range map[string]string{
			"bundles/abs":                   host,
			"bundles/rel":                   rel,
			"fbc/foo-operator/catalog.json": filepath.Join(host, "foo-operator", "catalog.json"),
		} {
			p := filepath.Join(g.Dir, filepath.FromSlash(link))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
		}
		refs := "name: catalog\nreferences:\n- name: foo-operator\n  image: ./bundles/abs\n" +
			"- name: bar-operator\n  image: ./bundles/rel\n- name: baz-operator\n  image: ./fbc\n"
		if err := os.WriteFile(filepath.Join(g.Dir, "catalog.yaml"), []byte(refs), 0o644); err != nil {
			t.Fatal(err)
		}
		g.Git("add", "-A")
		g.Git("-c", "user.name=mallory", "-c", "user.email=mallory@users.noreply.example.com", "commit", "-q", "-m", "symlinks")
		return strings.TrimSpace(g.Git("rev-parse", "HEAD"))
	})
	out := checkOutput(cr)
	if cr.Conclusion != "failure" {
		t.Errorf("conclusion %s:\n%s", cr.Conclusion, out)
	}
	for _, want := range []string{"catalog.yaml:3 ", "catalog.yaml:5 ", "catalog.yaml:7 ", "leads through a symlink outside the repository"} {
		if !strings.Contains(out, want) {
			t.Errorf("the check run lacks %q:\n%s", want, out)
		}
	}
	page := h.get(strings.TrimPrefix(cr.DetailsURL, publicURL))
	for what, text := range map[string]string{"check run": out, "run page": page, "logs": h.logs.String()} {
		if strings.Contains(text, secret) {
			t.Errorf("the %s shows the host's catalog (%s)", what, secret)
		}
	}
}

// privateImage pushes a bundle image of pkg at version to a registry that needs login.
func privateImage(t *testing.T, reg *registrytest.Registry, login *registrytest.BasicAuth, pkg, version string) string {
	t.Helper()
	img, err := mutate.Config(mutate.MediaType(empty.Image, types.OCIManifestSchema1), v1.Config{Labels: map[string]string{
		"operators.operatorframework.io.bundle.package.v1": pkg, "version": version, "private": reg.Host}})
	if err != nil {
		t.Fatal(err)
	}
	tag, err := name.NewTag(fmt.Sprintf("%s/private/%s-bundle:v%s", reg.Host, pkg, version), name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(tag, img, remote.WithAuth(&authn.Basic{Username: login.User, Password: login.Password})); err != nil {
		t.Fatal(err)
	}
	dig, _ := img.Digest()
	return tag.Context().Digest(dig.String()).String()
}

// Two installations, each with its own private registry and login in bot.yaml (octo/catalog's by
// repository, installation 43's by installation). A pull request in installation 43 whose catalog names
// an image on octo's private registry gets a failed check, and octo's registry never sees octo's login
// during it; octo's own pull request with the same image passes with octo's login, and installation 43's
// pull request with an image on its own registry passes with its login.
func TestAttackCrossInstallationCredentials(t *testing.T) {
	octoLogin := &registrytest.BasicAuth{User: "octo-robot", Password: "octo-registry-password-1"}
	evilLogin := &registrytest.BasicAuth{User: "evil-robot", Password: "evil-registry-password-2"}
	octoReg, evilReg := registrytest.New(t, octoLogin.Wrap), registrytest.New(t, evilLogin.Wrap)
	dir := t.TempDir()
	octoPw, evilPw := filepath.Join(dir, "octo"), filepath.Join(dir, "evil")
	_ = os.WriteFile(octoPw, []byte(octoLogin.Password+"\n"), 0o600)
	_ = os.WriteFile(evilPw, []byte(evilLogin.Password+"\n"), 0o600)
	const evilRepo = "evil/catalog"
	h := newHarness(t, func(h *harness) {
		h.cfg.Registries = []RegistryCredential{
			{Registry: octoReg.Host, Repositories: []string{repoFull}, Username: octoLogin.User, PasswordFile: octoPw},
			{Registry: evilReg.Host, Installations: []int64{43}, Username: evilLogin.User, PasswordFile: evilPw},
		}
	})
	h.gh.AddRepo(evilRepo)
	main := h.seedMain(repoConfig)
	h.gh.SetRef(evilRepo, "heads/main", main)
	octoImage := privateImage(t, octoReg, octoLogin, "foo-operator", "0.2.0")
	evilImage := privateImage(t, evilReg, evilLogin, "foo-operator", "0.2.0")
	release := func(branch, image string) string {
		files := map[string]string{"catalog/foo-operator/catalog.json": fbc("foo-operator", func(v string) string {
			if v == "0.2.0" {
				return image
			}
			return h.bundleImage("foo-operator", v)
		}, "0.1.0", "0.2.0")}
		return h.git.Commit(branch, main, "alice", "foo-operator v0.2.0", files)
	}
	check := func(repo string, inst int64, n int, head string) githubtest.CheckRun {
		t.Helper()
		h.gh.AddPullRequest(repo, githubtest.PullRequest{Number: n, User: "alice", HeadSHA: head, BaseSHA: main,
			HeadRef: fmt.Sprintf("alice/change-%d", n), Title: "foo-operator v0.2.0"})
		h.git.SetPull(n, head)
		owner, _, _ := strings.Cut(repo, "/")
		h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(n, "alice", head, main, map[string]any{
			"repository.full_name": repo, "repository.owner.login": owner, "installation.id": inst}))
		h.waitIdle()
		for _, cr := range h.gh.CheckRuns(repo) {
			if cr.HeadSHA == head {
				return cr
			}
		}
		t.Fatalf("no check run on %s of %s", short(head), repo)
		return githubtest.CheckRun{}
	}

	// The attack: installation 43 names octo's private image.
	seen := len(octoLogin.Users())
	cr := check(evilRepo, 43, 7, release("alice/steal", octoImage))
	if cr.Conclusion == "success" {
		t.Errorf("installation 43's check passed with octo's private image:\n%s", checkOutput(cr))
	}
	if users := octoLogin.Users()[seen:]; len(users) == 0 || slices.Contains(users, octoLogin.User) {
		t.Errorf("octo's registry saw %q during installation 43's check, want only anonymous requests", users)
	}
	if !strings.Contains(checkOutput(cr), octoReg.Host) {
		t.Errorf("the failed check does not name the registry:\n%s", checkOutput(cr))
	}

	// octo's own pull request, same image: octo's login is used.
	seen = len(octoLogin.Users())
	if cr := check(repoFull, installationID, 8, release("alice/octo", octoImage)); cr.Conclusion != "success" {
		t.Errorf("octo's check: %s\n%s", cr.Conclusion, checkOutput(cr))
	}
	if !slices.Contains(octoLogin.Users()[seen:], octoLogin.User) {
		t.Errorf("octo's check did not log in to octo's registry: %q", octoLogin.Users()[seen:])
	}

	// Installation 43 with its own registry: its login, by installation, works; octo's pull request naming
	// installation 43's image gets nothing from it.
	if cr := check(evilRepo, 43, 9, release("alice/own", evilImage)); cr.Conclusion != "success" {
		t.Errorf("installation 43's own image: %s\n%s", cr.Conclusion, checkOutput(cr))
	}
	seen = len(evilLogin.Users())
	if cr := check(repoFull, installationID, 10, release("alice/other", evilImage)); cr.Conclusion == "success" {
		t.Errorf("octo's check passed with installation 43's private image")
	}
	if slices.Contains(evilLogin.Users()[seen:], evilLogin.User) {
		t.Errorf("installation 43's registry saw its login during octo's check")
	}
}

// The base configuration lists the registries renders may read (images.allowedRegistries). A pull
// request whose references config names another registry, even one it adds to the list in its own
// .catalogbot.yaml, gets a failed check on the reference's line, and that registry is never contacted.
func TestAttackRenderFromUnlistedRegistry(t *testing.T) {
	var requests atomic.Int64
	elsewhere := registrytest.New(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { requests.Add(1); next.ServeHTTP(w, r) })
	})
	h := newHarness(t)
	config := refsRepoConfig + "images:\n  allowedRegistries: [" + h.reg.Host + "]\n"
	cr := runRefsAttackOn(h, config, 2, func(main string) string {
		refs := "name: catalog\nreferences:\n- name: foo-operator\n  image: " + elsewhere.Host + "/ops/foo-index:v1\n"
		widened := strings.Replace(config, "allowedRegistries: [", "allowedRegistries: ["+elsewhere.Host+", ", 1)
		return h.git.Commit("mallory/elsewhere", main, "mallory", "render from elsewhere",
			map[string]string{"catalog.yaml": refs, ".catalogbot.yaml": widened})
	})
	out := checkOutput(cr)
	if cr.Conclusion != "failure" || !strings.Contains(out, "catalog.yaml:3 ") ||
		!strings.Contains(out, "registry "+elsewhere.Host+" is not an allowed registry") {
		t.Errorf("conclusion %s:\n%s", cr.Conclusion, out)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("the registry the base does not allow got %d requests", n)
	}
}
