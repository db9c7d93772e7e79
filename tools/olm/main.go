// Command olm writes and checks anthill's OLM bundle (registry+v1) with the
// Operator Framework's own types and validators, pinned in this module so
// the operator's go.mod stays free of their Kubernetes versions.
//
//	olm generate REPO_ROOT OUT_DIR   write OUT_DIR/manifests and OUT_DIR/metadata
//	olm validate BUNDLE_DIR          load the bundle as OLM does and run the
//	                                 bundle, CSV, CRD and OperatorHub validators
//
// The bundle is made from the same files `kubectl apply -k manifests/default`
// installs (CRDs, ClusterRole, leader-election Role, Deployment, metrics
// Service, person roles) and VERSION, so it cannot drift from them.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "olm:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	switch {
	case len(args) == 3 && args[0] == "generate":
		return generate(args[1], args[2])
	case len(args) == 2 && args[0] == "validate":
		return validate(args[1])
	}
	return fmt.Errorf("usage: olm generate REPO_ROOT OUT_DIR | olm validate BUNDLE_DIR")
}
