package cluster

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

func TestPreviewDeletionDecidesAsTheClusterMachine(t *testing.T) {
	cluster := func(mutate func(c *operatorv1alpha1.GlusterCluster)) *operatorv1alpha1.GlusterCluster {
		c := &operatorv1alpha1.GlusterCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gc"}}
		if mutate != nil {
			mutate(c)
		}
		return c
	}
	pv := func(name, driver string) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: driver}}},
		}
	}
	node := func(name, clusterName string) *operatorv1alpha1.GlusterNode {
		return &operatorv1alpha1.GlusterNode{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Spec: operatorv1alpha1.GlusterNodeSpec{Cluster: clusterName}}
	}
	fileDriver := objects.CSIDriverName(operatorv1alpha1.GlusterDriverFile)
	tests := []struct {
		name        string
		cluster     *operatorv1alpha1.GlusterCluster
		pvs         []*corev1.PersistentVolume
		nodes       []*operatorv1alpha1.GlusterNode
		wantReason  string
		wantBlocked bool
		wantPVs     string
		wantNodes   string
	}{
		{
			name: "the cluster's own PVs hold the teardown and are named", cluster: cluster(nil),
			pvs:   []*corev1.PersistentVolume{pv("pv-b", fileDriver), pv("other", "csi.example.com"), pv("pv-a", fileDriver)},
			nodes: []*operatorv1alpha1.GlusterNode{node("gc-1", "gc")}, wantReason: states.ReasonPVsExist, wantBlocked: true,
			wantPVs: "pv-a,pv-b", wantNodes: "gc-1",
		},
		{
			name: "without PVs the nodes of this cluster go first", cluster: cluster(nil),
			nodes:      []*operatorv1alpha1.GlusterNode{node("gc-2", "gc"), node("x-1", "x"), node("gc-1", "gc")},
			wantReason: states.ReasonDeletingNodes, wantNodes: "gc-1,gc-2",
		},
		{
			name: "a paused cluster waits", cluster: cluster(func(c *operatorv1alpha1.GlusterCluster) { c.Spec.Paused = true }),
			nodes: []*operatorv1alpha1.GlusterNode{node("gc-1", "gc")}, wantReason: states.ReasonPaused, wantBlocked: true, wantNodes: "gc-1",
		},
		{
			name: "a cluster without nodes removes its infrastructure", cluster: cluster(nil), wantReason: states.ReasonDeletingInfra,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PreviewDeletion(tt.cluster, tt.pvs, tt.nodes)
			if got.Decision.Reason != tt.wantReason || got.Blocked() != tt.wantBlocked {
				t.Errorf("decision %+v (blocked %t), want reason %s, blocked %t", got.Decision, got.Blocked(), tt.wantReason, tt.wantBlocked)
			}
			if s := strings.Join(got.PersistentVolumes, ","); s != tt.wantPVs {
				t.Errorf("PVs %q, want %q", s, tt.wantPVs)
			}
			if s := strings.Join(got.Nodes, ","); s != tt.wantNodes {
				t.Errorf("nodes %q, want %q", s, tt.wantNodes)
			}
		})
	}
}
