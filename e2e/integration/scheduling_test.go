package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/kube/objects"
)

// TestStatefulSetSpreadsOnePodPerZone proves the harness does real work: the
// StatefulSet controller creates pods, the scheduler honours a zone topology
// spread, and kwok runs them to Ready.
func TestStatefulSetSpreadsOnePodPerZone(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ns := env.Namespace(t)
	labels := map[string]string{"app": "spread"}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "spread", Namespace: ns},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr.To[int32](3),
			Selector:            &metav1.LabelSelector{MatchLabels: labels},
			ServiceName:         "spread",
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/pause:1"}},
					TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{
						MaxSkew: 1, TopologyKey: framework.ZoneLabel, WhenUnsatisfiable: corev1.DoNotSchedule,
						LabelSelector: &metav1.LabelSelector{MatchLabels: labels},
					}},
				},
			},
		},
	}
	if _, err := env.Client.AppsV1().StatefulSets(ns).Create(ctx, sts, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var last string
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		pods, err := env.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=spread"})
		if err != nil {
			return false, err
		}
		zones := map[string]int{}
		ready := 0
		for _, p := range pods.Items {
			if p.Spec.NodeName == "" || !objects.PodReady(&p) {
				continue
			}
			node, err := env.Client.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			zones[node.Labels[framework.ZoneLabel]]++
			ready++
		}
		last = fmt.Sprintf("%d pods, %d ready, per zone %v", len(pods.Items), ready, zones)
		return ready == 3 && len(zones) == 3, nil
	})
	if err != nil {
		t.Fatalf("want 3 Ready pods in 3 distinct zones: %v (last seen: %s)", err, last)
	}
	t.Logf("scheduled: %s", last)
}
