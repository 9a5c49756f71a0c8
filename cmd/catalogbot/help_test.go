package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// allVerbs are the verbs of the one catalogbot binary (issue 24: there is no lean build that lacks some).
var allVerbs = []string{"action", "build", "bump", "check-images", "demo", "fmt", "init", "pr", "promote", "publish", "release", "render", "render-template", "serve", "smoke", "validate", "version"}

// Every verb is in the binary, parses its own flags (no verb passes its command line through to
// another executable), answers --help, and shell completion knows each of its flags.
func TestEveryVerbHelpAndCompletion(t *testing.T) {
	root := newRootCmd()
	var got []string
	for _, c := range root.Commands() {
		if c.Name() == "help" || c.Name() == "completion" || c.Hidden {
			continue
		}
		got = append(got, c.Name())
		if c.DisableFlagParsing {
			t.Errorf("%s does not parse its flags", c.Name())
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, allVerbs) {
		t.Fatalf("verbs %v, want %v", got, allVerbs)
	}
	for _, verb := range allVerbs {
		t.Run(verb, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(t.Context(), []string{verb, "--help"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "Usage:\n  catalogbot "+verb) {
				t.Fatalf("catalogbot %s --help: exit %d\nstdout:\n%s\nstderr:\n%s", verb, code, stdout.String(), stderr.String())
			}
			cmd, _, err := newRootCmd().Find([]string{verb})
			if err != nil {
				t.Fatal(err)
			}
			// cobra offers only the required flags until they are given: give them
			line := []string{"__complete", verb}
			cmd.NonInheritedFlags().VisitAll(func(f *pflag.Flag) {
				if _, ok := f.Annotations[cobra.BashCompOneRequiredFlag]; ok {
					line = append(line, "--"+f.Name, "x")
				}
			})
			stdout.Reset()
			if code := run(t.Context(), append(line, "--"), &stdout, &stderr); code != 0 {
				t.Fatalf("completion of %s's flags: exit %d: %s", verb, code, stderr.String())
			}
			offered := map[string]bool{}
			for _, line := range strings.Split(stdout.String(), "\n") {
				name, _, _ := strings.Cut(line, "\t")
				offered[name] = true
			}
			cmd.NonInheritedFlags().VisitAll(func(f *pflag.Flag) {
				if _, required := f.Annotations[cobra.BashCompOneRequiredFlag]; !f.Hidden && !required && !offered["--"+f.Name] {
					t.Errorf("completion of catalogbot %s -- does not offer --%s; it offered:\n%s", verb, f.Name, stdout.String())
				}
			})
			if !offered["--help"] {
				t.Errorf("completion of catalogbot %s -- does not offer --help", verb)
			}
		})
	}
}
