// Command coredns is the cluster's DNS server (the name every Kubernetes
// distribution runs as "kube-dns"), with only the plugins the test cluster's
// Corefile uses, so it builds in a minute instead of pulling every cloud SDK.
// It is a module of its own: CoreDNS pins its own dependency versions, which
// must not move the Kubernetes binaries' (../go.mod). See scripts/kube-cluster.sh.
package main

import (
	"github.com/coredns/coredns/coremain"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/ready"
)

func main() {
	coremain.Run()
}
