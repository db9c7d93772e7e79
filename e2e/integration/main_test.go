package integration

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/gluster/anthill/e2e/framework"
)

// env is the control plane every test in this package shares: three zones
// with two fake nodes each, anthill's CRDs installed.
var env *framework.ControlPlane

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	cp, err := framework.Start(ctx, framework.Options{Zones: 3, NodesPerZone: 2, InstallCRDs: true, Log: os.Stderr})
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "integration: cannot start the control plane: %v\n", err)
		os.Exit(1)
	}
	env = cp
	code := m.Run()
	if code != 0 {
		if err := cp.Healthy(); err != nil {
			fmt.Fprintf(os.Stderr, "integration: control plane unhealthy: %v\n", err)
		}
	}
	cp.Stop()
	os.Exit(code)
}
