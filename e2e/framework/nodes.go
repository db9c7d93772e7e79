package framework

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// FakeNodeAnnotation marks nodes whose kubelet kwok simulates.
	FakeNodeAnnotation = "kwok.x-k8s.io/node"
	// ZoneLabel is the well-known topology label the scheduler spreads on.
	ZoneLabel = "topology.kubernetes.io/zone"
)

// ZoneName is the name of zone i (1-based): zone-1, zone-2, ...
func ZoneName(i int) string { return fmt.Sprintf("zone-%d", i) }

// FakeNode returns a kwok-managed node in zone with room for many pods.
func FakeNode(name, zone string) *corev1.Node {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{FakeNodeAnnotation: "fake"},
			Labels: map[string]string{
				"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
				"type": "kwok", ZoneLabel: zone,
			},
		},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
}

// CreateFakeNodes creates zones*perZone fake nodes named kwok-zone-<z>-<i>
// and waits until kwok reports every one Ready.
func (cp *ControlPlane) CreateFakeNodes(ctx context.Context, zones, perZone int) error {
	var names []string
	for z := 1; z <= zones; z++ {
		for i := 0; i < perZone; i++ {
			n := FakeNode(fmt.Sprintf("kwok-%s-%d", ZoneName(z), i), ZoneName(z))
			if _, err := cp.Client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("create node %s: %w", n.Name, err)
			}
			names = append(names, n.Name)
		}
	}
	cp.logf("created %d fake nodes in %d zones", len(names), zones)
	return cp.WaitNodesReady(ctx, names...)
}

// WaitNodesReady waits until every named node has condition Ready=True.
func (cp *ControlPlane) WaitNodesReady(ctx context.Context, names ...string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	return poll(ctx, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		for _, n := range names {
			node, err := cp.Client.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if !nodeReady(node) {
				return false, fmt.Errorf("node %s not Ready yet", n)
			}
		}
		return true, nil
	})
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
