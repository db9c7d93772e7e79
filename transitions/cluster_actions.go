package transitions

import (
	"context"
	"fmt"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/states"
)

// ClusterAction runs the side effect of one cluster or upgrade event or
// step; both machines act on the GlusterCluster.
type ClusterAction func(ctx context.Context, ops Ops, c ClusterTarget) error

// ClusterActions are the cluster machine's actions.
var ClusterActions = register(Actions[ClusterAction]{
	Machine: states.ClusterMachine,
	Events: map[fsm.Event]ClusterAction{
		states.ClusterProvision: ensureClusterInfra,
		// External mode: the event and the step write the same objects.
		states.ClusterReconfigure: syncEndpoints,
	},
	Steps: map[fsm.Step]ClusterAction{
		states.ClusterScaleNodes:        scaleNodes,
		states.ClusterDeleteNodes:       deleteNodes,
		states.ClusterDeleteInfra:       deleteClusterInfra,
		states.ClusterEnsureDrivers:     ensureDrivers,
		states.ClusterSyncEndpoints:     syncEndpoints,
		states.ClusterApplyOptions:      applyOptions,
		states.ClusterIssueCertificates: issueCertificates,
	},
})

// UpgradeActions are the upgrade machine's actions. Its selectNextNode
// step has none: what it records is the machine's own status, written by
// the sync that runs it.
var UpgradeActions = register(Actions[ClusterAction]{
	Machine: states.UpgradeMachine,
	Steps: map[fsm.Step]ClusterAction{
		states.UpgradeRollClients: rollClients,
	},
})

func key(c ClusterTarget) string { return c.Namespace + "/" + c.Name }

func ensureClusterInfra(ctx context.Context, ops Ops, c ClusterTarget) error {
	if err := ops.Kube.EnsureClusterInfra(ctx, c); err != nil {
		return fmt.Errorf("ensure infrastructure of cluster %s: %w", key(c), err)
	}
	return nil
}

func issueCertificates(ctx context.Context, ops Ops, c ClusterTarget) error {
	if err := ops.Kube.IssueCertificates(ctx, c); err != nil {
		return fmt.Errorf("issue certificates of cluster %s: %w", key(c), err)
	}
	return nil
}

func scaleNodes(ctx context.Context, ops Ops, c ClusterTarget) error {
	if c.DesiredNodes < 0 {
		return fmt.Errorf("scale cluster %s: negative node count %d", key(c), c.DesiredNodes)
	}
	if err := ops.Kube.ScaleNodes(ctx, c, c.DesiredNodes); err != nil {
		return fmt.Errorf("scale cluster %s to %d nodes: %w", key(c), c.DesiredNodes, err)
	}
	return nil
}

func deleteNodes(ctx context.Context, ops Ops, c ClusterTarget) error {
	if err := ops.Kube.DeleteNodes(ctx, c); err != nil {
		return fmt.Errorf("delete nodes of cluster %s: %w", key(c), err)
	}
	return nil
}

func deleteClusterInfra(ctx context.Context, ops Ops, c ClusterTarget) error {
	if err := ops.Kube.DeleteClusterInfra(ctx, c); err != nil {
		return fmt.Errorf("delete infrastructure of cluster %s: %w", key(c), err)
	}
	return nil
}

func ensureDrivers(ctx context.Context, ops Ops, c ClusterTarget) error {
	if err := ops.Kube.EnsureCSIDrivers(ctx, c); err != nil {
		return fmt.Errorf("ensure CSI drivers of cluster %s: %w", key(c), err)
	}
	return nil
}

func applyOptions(ctx context.Context, ops Ops, c ClusterTarget) error {
	if len(c.Options) == 0 {
		return nil
	}
	if err := ops.GD2.SetClusterOptions(ctx, c.Options); err != nil {
		return fmt.Errorf("set cluster options of %s: %w", key(c), err)
	}
	return nil
}

func syncEndpoints(ctx context.Context, ops Ops, c ClusterTarget) error {
	if err := ops.Kube.SyncEndpoints(ctx, c); err != nil {
		return fmt.Errorf("sync the endpoints of external cluster %s: %w", key(c), err)
	}
	return nil
}

func rollClients(ctx context.Context, ops Ops, c ClusterTarget) error {
	if c.TargetVersion == "" {
		return fmt.Errorf("roll CSI clients of cluster %s: no target version", key(c))
	}
	if err := ops.Kube.SetCSIVersion(ctx, c, c.TargetVersion); err != nil {
		return fmt.Errorf("roll CSI clients of cluster %s to %s: %w", key(c), c.TargetVersion, err)
	}
	return nil
}
