package smoke

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"
	kindexec "sigs.k8s.io/kind/pkg/exec"
	kindlog "sigs.k8s.io/kind/pkg/log"
)

// clusterBackend is what Run needs from a cluster manager; kindBackend is the real one.
type clusterBackend interface {
	Exists(ctx context.Context, name string) (bool, error)
	Create(ctx context.Context, name, nodeImage, config string) error
	Delete(ctx context.Context, name string) error
	KubeConfig(ctx context.Context, name string) ([]byte, error)
	LoadArchive(ctx context.Context, name, path string) error
}

// kindBackend drives kind through its library (docker, podman or nerdctl, whichever kind detects).
type kindBackend struct {
	provider *cluster.Provider
}

func newKindBackend(progress io.Writer) *kindBackend {
	return &kindBackend{provider: cluster.NewProvider(cluster.ProviderWithLogger(kindLogger{w: progress}))}
}

func (k *kindBackend) Exists(_ context.Context, name string) (bool, error) {
	names, err := k.provider.List()
	if err != nil {
		// kind's error names the engine command; what the engine printed ("Cannot connect to the
		// Docker daemon ...") says why, so it goes into the error too.
		if re := kindexec.RunErrorForError(err); re != nil && len(bytes.TrimSpace(re.Output)) > 0 {
			err = fmt.Errorf("%w: %s", err, capText(string(bytes.TrimSpace(re.Output)), 512))
		}
		return false, fmt.Errorf("listing kind clusters (is a container engine running?): %w", err)
	}
	return slices.Contains(names, name), nil
}

// Create creates the cluster. kind's Create takes no context: when ctx ends first, the half-created
// cluster is deleted, which makes Create return promptly.
func (k *kindBackend) Create(ctx context.Context, name, nodeImage, config string) error {
	opts := []cluster.CreateOption{
		cluster.CreateWithDisplayUsage(false),
		cluster.CreateWithDisplaySalutation(false),
		// the kubeconfig is read with KubeConfig; do not touch the user's ~/.kube/config
		cluster.CreateWithKubeconfigPath(os.DevNull),
	}
	if deadline, ok := ctx.Deadline(); ok {
		opts = append(opts, cluster.CreateWithWaitForReady(time.Until(deadline)))
	}
	if nodeImage != "" {
		opts = append(opts, cluster.CreateWithNodeImage(nodeImage))
	}
	if config != "" {
		opts = append(opts, cluster.CreateWithRawConfig([]byte(config)))
	}
	done := make(chan error, 1)
	go func() { done <- k.provider.Create(name, opts...) }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("creating kind cluster %s: %w", name, err)
		}
		return nil
	case <-ctx.Done():
		derr := k.provider.Delete(name, os.DevNull)
		<-done
		return errors.Join(fmt.Errorf("creating kind cluster %s: %w", name, context.Cause(ctx)), derr)
	}
}

func (k *kindBackend) Delete(_ context.Context, name string) error {
	if err := k.provider.Delete(name, os.DevNull); err != nil {
		return fmt.Errorf("deleting kind cluster %s: %w", name, err)
	}
	return nil
}

func (k *kindBackend) KubeConfig(_ context.Context, name string) ([]byte, error) {
	s, err := k.provider.KubeConfig(name, false)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig of kind cluster %s: %w", name, err)
	}
	return []byte(s), nil
}

// LoadArchive imports an image archive into every node's containerd (what `kind load image-archive`
// does), then names each tagged image also by repo@digest, as a pull would: OLM references catalogs by
// digest and kubelet looks them up by that name.
func (k *kindBackend) LoadArchive(ctx context.Context, name, path string) error {
	ns, err := k.provider.ListInternalNodes(name)
	if err != nil {
		return fmt.Errorf("listing nodes of kind cluster %s: %w", name, err)
	}
	if len(ns) == 0 {
		return fmt.Errorf("kind cluster %s has no nodes", name)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(ns))
	for i, n := range ns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = loadOnNode(ctx, n, path)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func loadOnNode(ctx context.Context, n nodes.Node, path string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("image archive: %w", err)
	}
	defer f.Close()
	if err := nodeutils.LoadImageArchive(n, f); err != nil {
		return fmt.Errorf("loading %s into node %s: %w", path, n.String(), err)
	}
	out, err := kindexec.Output(n.Command("ctr", "--namespace=k8s.io", "images", "ls"))
	if err != nil {
		return fmt.Errorf("listing images of node %s: %w", n.String(), err)
	}
	for _, t := range digestTags(out) {
		if err := n.Command("ctr", "--namespace=k8s.io", "images", "tag", t[0], t[1]).Run(); err != nil {
			return fmt.Errorf("naming %s as %s on node %s: %w", t[0], t[1], n.String(), err)
		}
	}
	return nil
}

// digestTags reads `ctr images ls` output and returns [existing, repo@digest] pairs for every tagged
// image whose digest name is missing.
func digestTags(ls []byte) [][2]string {
	have := map[string]bool{}
	type row struct{ ref, digest string }
	var rows []row
	sc := bufio.NewScanner(bytes.NewReader(ls))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || f[0] == "REF" {
			continue
		}
		have[f[0]] = true
		rows = append(rows, row{f[0], f[2]})
	}
	var out [][2]string
	for _, r := range rows {
		if strings.Contains(r.ref, "@") || !strings.HasPrefix(r.digest, "sha256:") {
			continue
		}
		repo := r.ref
		if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
			repo = repo[:i]
		}
		name := repo + "@" + r.digest
		if !have[name] {
			have[name] = true
			out = append(out, [2]string{r.ref, name})
		}
	}
	return out
}

// kindLogger forwards kind's user-facing messages to the progress writer.
type kindLogger struct{ w io.Writer }

func (l kindLogger) Warn(m string)                        { fmt.Fprintln(l.w, "kind: WARNING:", m) }
func (l kindLogger) Warnf(f string, a ...any)             { l.Warn(fmt.Sprintf(f, a...)) }
func (l kindLogger) Error(m string)                       { fmt.Fprintln(l.w, "kind: ERROR:", m) }
func (l kindLogger) Errorf(f string, a ...any)            { l.Error(fmt.Sprintf(f, a...)) }
func (l kindLogger) V(v kindlog.Level) kindlog.InfoLogger { return kindInfo{w: l.w, on: v == 0} }

type kindInfo struct {
	w  io.Writer
	on bool
}

func (i kindInfo) Info(m string) {
	if i.on {
		fmt.Fprintln(i.w, "kind:", strings.TrimSpace(m))
	}
}
func (i kindInfo) Infof(f string, a ...any) { i.Info(fmt.Sprintf(f, a...)) }
func (i kindInfo) Enabled() bool            { return i.on }
