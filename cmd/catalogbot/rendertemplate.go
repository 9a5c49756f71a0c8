package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/render"
	"github.com/catalogbot/catalogbot/render/template"
)

// renderTemplateOptions are what render-template's command line says.
type renderTemplateOptions struct {
	io    streams
	stdin io.Reader
	// typ is TYPE ("" detects it from the schema); file is FILE ("-" for stdin).
	typ, file    string
	output       string
	migrateLevel string
	opmVersion   string
	// skipTLSVerify is set by --skip-tls-verify, --use-http or --skip-tls (opm's registry flags).
	skipTLSVerify bool
	noCache       bool
	// offline pulls nothing; seedFrom is a trusted checkout whose committed catalogs seed the bundle cache.
	offline  bool
	seedFrom string
}

// templateTypes are opm's TYPE arguments.
var templateTypes = map[string]bool{"basic": true, "semver": true, "substitutes": true}

func newRenderTemplateCmd(runF runner[renderTemplateOptions]) *cobra.Command {
	o := &renderTemplateOptions{}
	var useHTTP, skipTLS bool
	cmd := &cobra.Command{
		Use:   "render-template [TYPE] [FILE]",
		Short: "Render one catalog template to stdout, as opm alpha render-template does (a drop-in)",
		Long: `render-template renders a basic, semver or substitutes template and prints the catalog byte for
byte as ` + "`opm alpha render-template`" + ` prints it (-o json, yaml or mermaid), with opm's arguments: TYPE is
one of basic, semver, substitutes (detected from the template's schema when absent), and FILE is the
template ("-" or absent: standard input; with one argument that is a TYPE, the template is read from
standard input). A Makefile calling ` + "`opm alpha render-template`" + ` switches by replacing "opm alpha" with
"catalogbot".

Errors are opm's messages, prefixed with the template file and line they are about. Exit codes: 1 the
template is refused, 2 usage, 3 a registry could not be reached. Bundle images are pulled without a
container daemon and kept by digest in $XDG_CACHE_HOME/catalogbot/templates.

--seed-from DIR seeds the bundle cache from the catalogs committed in DIR, a trusted checkout of a
template-driven repository (as catalogbot render does), so bundles already rendered there are not
pulled; --offline pulls nothing, and without --seed-from seeds from the catalogs committed at HEAD of
the git repository holding the working directory.`,
		Args: cobra.RangeArgs(0, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.io, o.stdin = streamsOf(cmd), cmd.InOrStdin()
			o.skipTLSVerify = o.skipTLSVerify || useHTTP || skipTLS
			if err := o.parseArgs(args); err != nil {
				return err
			}
			return orDefault(runF, runRenderTemplate)(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVarP(&o.output, "output", "o", "json", "Output format (json|yaml|mermaid)")
	cmd.Flags().StringVar(&o.migrateLevel, "migrate-level", "", "Name of the last migration to run (default: none): "+template.MigrateCSVMetadata+" or "+template.MigrateAll)
	cmd.Flags().StringVar(&o.opmVersion, "opm-version", string(template.DefaultOPMVersion), "the opm release whose rendering to reproduce: "+template.OPMVersionsText())
	cmd.Flags().BoolVar(&o.skipTLSVerify, "skip-tls-verify", false, "skip TLS certificate verification of registries")
	cmd.Flags().BoolVar(&useHTTP, "use-http", false, "as opm's flag: registries are accepted without TLS verification (plain HTTP is used for loopback and .local registries only)")
	cmd.Flags().BoolVar(&skipTLS, "skip-tls", false, "deprecated opm flag: as --use-http")
	cmd.Flags().BoolVar(&o.noCache, "no-cache", false, "do not keep bundle renders on disk")
	cmd.Flags().BoolVar(&o.offline, "offline", false, "pull nothing: bundles come from the committed catalogs (HEAD's, or --seed-from's) and the cache")
	cmd.Flags().StringVar(&o.seedFrom, "seed-from", "", "a trusted checkout whose committed catalogs seed the bundle cache")
	return cmd
}

// parseArgs reads TYPE and FILE as opm does: one argument is a TYPE when it names one, else the file.
func (o *renderTemplateOptions) parseArgs(args []string) error {
	o.file = "-"
	switch len(args) {
	case 1:
		if templateTypes[args[0]] {
			o.typ = args[0]
		} else {
			o.file = args[0]
		}
	case 2:
		o.typ, o.file = args[0], args[1]
		if !templateTypes[o.typ] {
			return diag.UsageError(fmt.Errorf("invalid template type %q, must be one of: [basic semver substitutes]", o.typ))
		}
	}
	return nil
}

func runRenderTemplate(ctx context.Context, o *renderTemplateOptions) error {
	name, data, err := o.read()
	if err != nil {
		return err
	}
	switch o.output {
	case "json", "yaml", "mermaid":
	default:
		return diag.UsageError(fmt.Errorf("invalid --output value %q, expected (json|yaml|mermaid)", o.output))
	}
	version, err := template.ParseOPMVersion(o.opmVersion)
	if err != nil {
		return diag.UsageError(fmt.Errorf("--opm-version: %w", err))
	}
	opts := render.Options{NoCache: true}
	if o.skipTLSVerify {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the user asked for it, as opm's flag
		opts.RemoteOptions = []remote.Option{remote.WithTransport(tr)}
	}
	pull, err := render.NewBundleImages(opts)
	if err != nil {
		return err
	}
	src := &template.Images{Store: templateStore("", o.noCache), Pull: pull}
	if o.offline || o.seedFrom != "" {
		if err := seedTemplateStore(ctx, src.Store, o.seedFrom); err != nil {
			return err
		}
		if o.offline {
			src.Pull, src.Offline = nil, true
		}
	}
	c, err := template.Render(ctx, data, name, src, template.Options{Type: o.typ, MigrateLevel: o.migrateLevel, OPMVersion: version})
	if err != nil {
		// A refused template is the author's (exit 1); a registry that cannot be reached keeps its
		// infrastructure category (exit 3).
		var te *template.Error
		if errors.As(err, &te) && diag.CategoryOf(err) == diag.Internal {
			return diag.InvalidError(err)
		}
		return err
	}
	var buf bytes.Buffer
	if o.output == "mermaid" {
		err = template.WriteMermaid(&buf, c, version, o.io.err)
	} else {
		err = template.Write(&buf, c, o.output)
	}
	if err != nil {
		return diag.InvalidError(fmt.Errorf("%s: writing output: %w", name, err))
	}
	_, err = o.io.out.Write(buf.Bytes())
	return err
}

// seedTemplateStore seeds store from the catalogs committed in the template-driven checkout seedFrom
// (its work tree, which the caller trusts), or, when seedFrom is "", at HEAD of the git repository
// holding the working directory (read from git, never the work tree).
func seedTemplateStore(ctx context.Context, store *template.Store, seedFrom string) error {
	root := seedFrom
	if root == "" {
		top, err := gitrepo.TopLevel(ctx, ".")
		if err != nil {
			return diag.UsageError(errors.New("--offline outside a git repository: give --seed-from, a checkout whose committed catalogs hold the template's bundles"))
		}
		root = top
	}
	setup, err := resolveRepo(root)
	if err != nil {
		return err
	}
	if !setup.layout.Templates {
		return diag.UsageError(fmt.Errorf("%s is not a template-driven repository (no catalogs: in its %s; catalogbot init writes one): nothing to seed the bundle cache from", root, config.ConfigFile))
	}
	tcats := template.CatalogsOf(setup.layout.Catalogs)
	jobs, _, err := template.Plan(root, tcats, "")
	if err != nil {
		return diag.UsageError(err)
	}
	if seedFrom != "" {
		return template.SeedFromCommitted(ctx, store, root, tcats, jobs)
	}
	if _, err := seedFromHEAD(ctx, store, root, setup.layout, jobs); err != nil {
		return err
	}
	return nil
}

// read reads the template from FILE or stdin (named "stdin" in messages), bounded by the template size
// limit.
func (o *renderTemplateOptions) read() (string, []byte, error) {
	var r io.Reader = o.stdin
	name := "stdin"
	if o.file != "-" {
		f, err := os.Open(o.file)
		if err != nil {
			return "", nil, diag.UsageError(fmt.Errorf("unable to open %q: %v", o.file, err))
		}
		defer f.Close()
		r, name = f, o.file
	}
	data, err := io.ReadAll(io.LimitReader(r, template.MaxTemplateSize+1))
	if err != nil {
		return "", nil, diag.UsageError(fmt.Errorf("reading %s: %w", name, err))
	}
	return name, data, nil
}
