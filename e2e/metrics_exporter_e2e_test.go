//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
)

// TestGlusterExporterRunsBesideEachGD2: with spec.gluster.metricsExporter
// every server's pod runs gluster-exporter from the server's image, with
// its metrics port, and the servers come up with it; an external cluster
// asking for it is refused at admission with the field named.
func TestGlusterExporterRunsBesideEachGD2(t *testing.T) {
	ns := newNamespace(t)
	const name = "exporter"
	ctx := context.Background()
	createClusterWith(t, ns, name, 1, func(c *operatorv1alpha1.GlusterCluster) {
		if c.Spec.Gluster == nil {
			c.Spec.Gluster = &operatorv1alpha1.GlusterServerSpec{}
		}
		c.Spec.Gluster.MetricsExporter = ptr.To(true)
	})
	nodes := waitNodes(t, ns, name, 3, 3*time.Minute)
	for n := range nodes {
		waitChecked(ctx, t, ns, "the exporter beside GD2 in "+n, time.Minute, func(ctx context.Context) error {
			pod, err := env.Client.CoreV1().Pods(ns).Get(ctx, objects.NodePodName(n), metav1.GetOptions{})
			if err != nil {
				return err
			}
			return checkExporter(pod)
		})
	}

	ext := &operatorv1alpha1.GlusterCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "external"},
		Spec: operatorv1alpha1.GlusterClusterSpec{
			Mode:     operatorv1alpha1.ClusterModeExternal,
			External: &operatorv1alpha1.ExternalSpec{Nodes: []operatorv1alpha1.ExternalNode{{Address: "192.0.2.1", Zone: "zone-1"}}},
			Gluster:  &operatorv1alpha1.GlusterServerSpec{MetricsExporter: ptr.To(true)},
			CSI:      &operatorv1alpha1.CSISpec{Enabled: ptr.To(false)},
		},
	}
	_, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Create(ctx, ext, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err == nil || !strings.Contains(err.Error(), "spec.gluster.metricsExporter") {
		t.Errorf("an external cluster with spec.gluster.metricsExporter: got %v, want the refusal naming the field", err)
	}
}

// checkExporter says what is wrong with the exporter container of a
// server's pod.
func checkExporter(pod *corev1.Pod) error {
	var gd2, exp *corev1.Container
	for i := range pod.Spec.Containers {
		switch c := &pod.Spec.Containers[i]; c.Name {
		case objects.ContainerGD2:
			gd2 = c
		case objects.ContainerGlusterExporter:
			exp = c
		}
	}
	switch {
	case gd2 == nil || exp == nil:
		return fmt.Errorf("pod %s: containers %v, want glusterd2 and gluster-exporter", pod.Name, pod.Spec.Containers)
	case exp.Image != gd2.Image:
		return fmt.Errorf("pod %s: exporter image %s, GD2's %s", pod.Name, exp.Image, gd2.Image)
	case len(exp.Ports) != 1 || exp.Ports[0].ContainerPort != objects.GlusterExporterPort || exp.Ports[0].Name != objects.PortNameGlusterMetrics:
		return fmt.Errorf("pod %s: exporter ports %v", pod.Name, exp.Ports)
	}
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name == objects.ContainerGlusterExporter && !s.Ready {
			return fmt.Errorf("pod %s: the exporter is not ready", pod.Name)
		}
	}
	return nil
}
