package smoke

import (
	"bytes"
	"fmt"
	"path"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kindv1alpha4 "sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
)

// hostOnlyPaths are host paths no kind node may mount: the container engine's sockets and state, from
// which a pod of the node could start containers on the host or read its images and volumes.
var hostOnlyPaths = []string{
	"/var/run/docker.sock", "/run/docker.sock", "/var/run/docker", "/run/docker", "/var/lib/docker",
	"/run/containerd", "/var/run/containerd", "/var/lib/containerd",
	"/run/podman", "/var/run/podman", "/var/lib/containers", "/run/crio", "/var/run/crio",
}

// kindConfigMounts refuses a kind config whose nodes mount the host's / or its container engine (a
// socket, or the engine's state directory) through extraMounts: the operators the smoke installs run
// on those nodes. The config is the operator's (bot.yaml, --smoke-kind-config), never a pull request's.
func (o Options) kindConfigMounts() []error {
	if o.KindConfig == "" {
		return nil
	}
	var cfg kindv1alpha4.Cluster
	if err := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader([]byte(o.KindConfig)), 4096).Decode(&cfg); err != nil {
		return []error{fmt.Errorf("kind config: %w", err)}
	}
	var errs []error
	for i, n := range cfg.Nodes {
		for _, m := range n.ExtraMounts {
			if why := hostOnly(m.HostPath); why != "" {
				errs = append(errs, fmt.Errorf("kind config: nodes[%d].extraMounts mounts the host's %s (%s) into a node: the operators the smoke installs would reach the machine running it", i, m.HostPath, why))
			}
		}
	}
	return errs
}

// hostOnly says why the host path p must not be mounted into a node, "" when it may be.
func hostOnly(p string) string {
	if p == "" {
		return ""
	}
	c := path.Clean(p)
	if c == "/" {
		return "its root"
	}
	for _, h := range hostOnlyPaths {
		if c == h || strings.HasPrefix(c, h+"/") || strings.HasPrefix(h, c+"/") {
			return "the container engine's " + h
		}
	}
	if strings.HasSuffix(c, ".sock") {
		return "a socket"
	}
	return ""
}
