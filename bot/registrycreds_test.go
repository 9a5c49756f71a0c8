package bot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
)

func TestRegistryCredentialsConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cred RegistryCredential
		want string // "" valid
	}{
		{"by repository", RegistryCredential{Registry: "quay.io", Repositories: []string{"octo/catalog"}, Username: "u", PasswordEnv: "P"}, ""},
		{"by owner and installation", RegistryCredential{Registry: "localhost:5000", Repositories: []string{"octo/*"}, Installations: []int64{4}, Username: "u", PasswordFile: "/f"}, ""},
		{"global", RegistryCredential{Registry: "quay.io", Username: "u", PasswordEnv: "P"}, "there are no global credentials"},
		{"every owner", RegistryCredential{Registry: "quay.io", Repositories: []string{"*/*"}, Username: "u", PasswordEnv: "P"}, `"*/*" is not owner/name`},
		{"bad host", RegistryCredential{Registry: "https://quay.io", Repositories: []string{"o/r"}, Username: "u", PasswordEnv: "P"}, "is not a registry host"},
		{"two passwords", RegistryCredential{Registry: "quay.io", Repositories: []string{"o/r"}, Username: "u", PasswordEnv: "P", PasswordFile: "/f"}, "one of passwordEnv or passwordFile"},
		{"no user", RegistryCredential{Registry: "quay.io", Repositories: []string{"o/r"}, PasswordEnv: "P"}, "set username"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(validateRegistries([]RegistryCredential{tc.cred}), "; ")
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRegistryKeychainPerRepository(t *testing.T) {
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte("hub-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CATALOGBOT_TEST_QUAY", "quay-secret")
	logins, err := loadRegistryLogins([]RegistryCredential{
		{Registry: "docker.io", Repositories: []string{"Octo/*"}, Username: "hub", PasswordFile: pw},
		{Registry: "quay.io", Installations: []int64{7}, Username: "quay", PasswordEnv: "CATALOGBOT_TEST_QUAY"},
	})
	if err != nil {
		t.Fatal(err)
	}
	b := &Bot{registries: logins}
	for _, tc := range []struct {
		inst       int64
		repo, ref  string
		user, pass string // "" anonymous
	}{
		{1, "octo/catalog", "busybox", "hub", "hub-secret"},
		{1, "octo/other", "index.docker.io/library/busybox", "hub", "hub-secret"},
		{1, "octo/catalog", "quay.io/x/y", "", ""},
		{7, "evil/catalog", "quay.io/x/y", "quay", "quay-secret"},
		{7, "evil/catalog", "busybox", "", ""},
		{1, "octopus/catalog", "busybox", "", ""},
		{0, "evil/catalog", "quay.io/x/y", "", ""},
	} {
		ref, err := name.ParseReference(tc.ref)
		if err != nil {
			t.Fatal(err)
		}
		a, err := b.keychainFor(tc.inst, tc.repo).Resolve(ref.Context())
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := a.Authorization()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Username != tc.user || cfg.Password != tc.pass || tc.user == "" && a != authn.Anonymous {
			t.Errorf("installation %d %s pulling %s: got user %q", tc.inst, tc.repo, tc.ref, cfg.Username)
		}
	}
	t.Setenv("CATALOGBOT_TEST_QUAY", "")
	if _, err := loadRegistryLogins([]RegistryCredential{{Registry: "quay.io", Installations: []int64{7}, Username: "quay", PasswordEnv: "CATALOGBOT_TEST_QUAY"}}); err == nil ||
		!strings.Contains(err.Error(), "is empty") {
		t.Errorf("empty password: %v", err)
	}
}

// serve --check reads what the bot reads at start: the status token and every registry password.
func TestCheckAccessSecrets(t *testing.T) {
	c := DefaultConfig()
	if err := c.CheckAccessSecrets(); err != nil {
		t.Errorf("nothing configured: %v", err)
	}
	c.Registries = []RegistryCredential{{Registry: "quay.io", Repositories: []string{"o/r"}, Username: "u", PasswordEnv: "CATALOGBOT_TEST_UNSET_PASSWORD"}}
	if err := c.CheckAccessSecrets(); err == nil || !strings.Contains(err.Error(), "registries[0] (quay.io)") {
		t.Errorf("unset registry password: %v", err)
	}
	t.Setenv("CATALOGBOT_TEST_UNSET_PASSWORD", "pw")
	c.Status.TokenFile = filepath.Join(t.TempDir(), "missing")
	if err := c.CheckAccessSecrets(); err == nil || !strings.Contains(err.Error(), "status token file") {
		t.Errorf("missing status token file: %v", err)
	}
}
