//go:build corednsslim

// Command coredns is CoreDNS with the plugins a kind cluster's DNS uses and nothing else: kubeadm's
// Corefile (errors, health, ready, kubernetes, prometheus, forward, cache, loop, reload, loadbalance)
// plus a few small ones a maintainer may add while debugging a lane run (log, debug, hosts, rewrite,
// template, whoami). CoreDNS's own main links every plugin it ships (cloud providers' SDKs, tracers,
// etcd, geoip): a cold build of it took 438 s and 71 MB, this one 333 s and 51 MB (both from an empty
// build cache, side by side on one loaded 2-core machine, 2026-12-02). build-binaries.sh builds this
// file in a throwaway module that requires github.com/coredns/coredns at lib.sh's KO_COREDNS_VERSION
// (the build tag keeps it out of the hack module, which does not require CoreDNS).
package main

import (
	"strings"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/debug"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/hosts"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/metrics"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
	_ "github.com/coredns/coredns/plugin/rewrite"
	_ "github.com/coredns/coredns/plugin/template"
	_ "github.com/coredns/coredns/plugin/whoami"
)

// init keeps CoreDNS's execution order (its generated Directives list) for the plugins this binary
// registers (those imported above and the ones they import) and drops the others, so a Corefile naming a
// plugin this binary lacks fails at start-up with CoreDNS's own "Unknown directive" error.
func init() {
	registered := map[string]bool{}
	for _, name := range caddy.ListPlugins()["others"] { // "<server type>.<plugin>"
		registered[strings.TrimPrefix(name, "dns.")] = true
	}
	kept := dnsserver.Directives[:0:0]
	for _, d := range dnsserver.Directives {
		if registered[d] {
			kept = append(kept, d)
		}
	}
	dnsserver.Directives = kept
}

func main() { coremain.Run() }
