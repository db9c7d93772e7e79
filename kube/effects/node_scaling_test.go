package effects

import (
	"testing"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/internal/fixtures"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/transitions"
)

// fxScaleTarget is c's target with the plan the cluster machine makes
// before scaleNodes (its GatherLive): objects.ScalePlanOf over the live
// cluster and its live GlusterNodes.
func fxScaleTarget(t *testing.T, o *Kube, c *operatorv1alpha1.GlusterCluster) transitions.ClusterTarget {
	t.Helper()
	live, err := o.getCluster(fixtures.Ctx, c.Namespace, c.Name)
	fixtures.Must(t, err, "read the cluster to plan")
	nodes, err := o.clusterNodes(fixtures.Ctx, c.Namespace, c.Name)
	fixtures.Must(t, err, "list the nodes to plan")
	ct := fixtures.ClusterTarget(c)
	ct.Scale = objects.ScalePlanOf(live, nodes, nil).Order()
	return ct
}

func TestKubeOpsScaleNodesWithoutAPlanChangesNothing(t *testing.T) {
	c := fxScaleCluster(2, 1)
	f := newFxKube(t, nil, c)
	fixtures.Must(t, f.ops.ScaleNodes(fixtures.Ctx, fixtures.ClusterTarget(c), 3), "scale")
	if nodes := f.nodes(t); len(nodes) != 0 {
		t.Errorf("%d nodes created without a plan", len(nodes))
	}
}

func TestKubeOpsScaleNodesRefusesATemplateThatLeftTheSpec(t *testing.T) {
	c := fxScaleCluster(1, 0)
	f := newFxKube(t, nil, c)
	ct := fixtures.ClusterTarget(c)
	ct.Scale = objects.ScalePlan{Create: []*operatorv1alpha1.NodeTemplate{{Name: "gone"}}}.Order()
	if err := f.ops.ScaleNodes(fixtures.Ctx, ct, 1); err == nil {
		t.Error("a plan naming a template no longer in the spec ran")
	}
}
