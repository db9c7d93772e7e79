package cluster

import (
	"context"
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"

	listers "github.com/gluster/anthill/kube/client/listers/operator/v1alpha1"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/internal/fixtures"
	"github.com/gluster/anthill/kube/machines/gather"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

func TestClusterSyncerSurfacesAnUnknownPhaseWithoutResettingIt(t *testing.T) {
	cs, a := clusterLedgerFixture(t, 1)
	c := liveCluster(t, a)
	c.Finalizers = []string{objects.FinalizerCluster}
	c.Status.Phase = "Melting"
	if _, err := a.OperatorV1alpha1().GlusterClusters("ns").Update(context.Background(), c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	clusters := fixtures.NewIndexer()
	if err := clusters.Add(c); err != nil {
		t.Fatal(err)
	}
	cs.Clusters = listers.NewGlusterClusterLister(clusters)
	cs.GD2 = &effects.GD2Clients{Secrets: kubefake.NewClientset().CoreV1()}
	_, err := cs.Sync(context.Background(), gather.ClusterKey("ns", "gc"))
	var perm *engine.PermanentError
	if !errors.As(err, &perm) {
		t.Fatalf("want a permanent error, got %v", err)
	}
	got := liveCluster(t, a)
	if got.Status.Phase != "Melting" {
		t.Fatalf("unknown phase was reset to %q", got.Status.Phase)
	}
	found := false
	for _, cond := range got.Status.Conditions {
		found = found || (cond.Reason == states.ReasonUnknownState && cond.Status == metav1.ConditionTrue)
	}
	if !found {
		t.Fatalf("no condition names the unknown phase: %+v", got.Status.Conditions)
	}
}
