//go:build tools

// agnhost, the image Kubernetes' network tests run as pods, is built from this module too (test/env/k8s-e2e.sh),
// and the suite (lbsuite/) does not import it: naming it here keeps its requirements in go.mod and go.sum.
package tools

import _ "k8s.io/kubernetes/test/images/agnhost"
