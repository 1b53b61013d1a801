// CoreDNS, the cluster DNS kubeadm installs, with exactly the plugins the Corefile of kubeadm's CoreDNS addon
// uses (test/harness/localCluster/clusterDns.ts writes that Corefile): CoreDNS's own main imports every
// plugin it has, from cloud DNS backends to tracing, which would only lengthen the build.
package main

import (
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/metrics"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
)

func main() {
	coremain.Run()
}
