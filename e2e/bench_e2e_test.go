//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/gluster/anthill/e2e/framework"
)

// BenchmarkThirtyNodesOnline measures how long the operator takes to bring
// 30 Gluster nodes Online, against a baseline measured in the same run on
// the same control plane: a plain 30-replica StatefulSet with the same
// block claims becoming Ready. It reports the ratio (target: at most 1.5).
// Run with `make bench`; timing belongs here, never in a unit test.
func BenchmarkThirtyNodesOnline(b *testing.B) {
	// One operator over every namespace, with production timers, as users run it.
	watchEveryNamespace(b)
	const nodes = 30
	ctx := context.Background()
	// Two block disks per node for each run, with room to spare.
	if err := env.CreateLocalStorage(ctx, 12, "100Gi"); err != nil {
		b.Fatal(err)
	}
	for range b.N {
		baseline := timeStatefulSet(b, nodes)
		operator := timeCluster(b, nodes)
		ratio := operator.Seconds() / baseline.Seconds()
		b.ReportMetric(baseline.Seconds(), "baseline-s")
		b.ReportMetric(operator.Seconds(), "anthill-s")
		b.ReportMetric(ratio, "ratio")
		fmt.Printf("bench: %d nodes Online in %s; plain StatefulSet of %d Ready in %s; ratio %.2f (target <= 1.5)\n",
			nodes, operator.Round(time.Millisecond), nodes, baseline.Round(time.Millisecond), ratio)
	}
}

func timeStatefulSet(b *testing.B, replicas int32) time.Duration {
	b.Helper()
	ctx := context.Background()
	ns := newNamespace(b)
	sts := baselineStatefulSet(ns, "baseline", replicas, nil)
	sts.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
	start := time.Now()
	if _, err := env.Client.AppsV1().StatefulSets(ns).Create(ctx, sts, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	err := framework.WaitFor(ctx, 10*time.Minute, func(ctx context.Context) (bool, error) {
		s, err := env.Client.AppsV1().StatefulSets(ns).Get(ctx, "baseline", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return s.Status.ReadyReplicas == replicas, fmt.Errorf("%d of %d ready", s.Status.ReadyReplicas, replicas)
	})
	if err != nil {
		b.Fatalf("baseline StatefulSet: %v", err)
	}
	return time.Since(start)
}

func timeCluster(b *testing.B, nodes int32) time.Duration {
	b.Helper()
	ctx := context.Background()
	ns := newNamespace(b)
	startSim(b, ns, defaultSimOptions)
	if err := env.CreateSimAuthSecret(ctx, ns, "bench", simOf(b)); err != nil {
		b.Fatal(err)
	}
	c, err := framework.SampleCluster(ns, "bench", simOf(b), nodes/3)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if _, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Create(ctx, c, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	err = framework.WaitFor(ctx, 10*time.Minute, func(ctx context.Context) (bool, error) {
		ns, err := framework.ClusterNodes(ctx, anthill, ns, "bench")
		if err != nil {
			return false, err
		}
		online := 0
		for _, n := range ns {
			if n.Status.State == "Online" {
				online++
			}
		}
		return online == int(nodes), fmt.Errorf("%d of %d Online", online, nodes)
	})
	if err != nil {
		b.Fatalf("anthill cluster: %v", err)
	}
	return time.Since(start)
}

// baselineStatefulSet is the plain StatefulSet the bring-up benchmarks
// compare the operator against: pause containers with a Gluster node's
// claims (GD2's state directory and one block brick) of storageClass (nil:
// the default class).
func baselineStatefulSet(ns, name string, replicas int32, storageClass *string) *appsv1.StatefulSet {
	labels := map[string]string{"app": name}
	claim := func(claim string, mode corev1.PersistentVolumeMode, size string) corev1.PersistentVolumeClaim {
		return corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: claim},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, VolumeMode: ptr.To(mode),
				StorageClassName: storageClass,
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
			},
		}
	}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To(replicas), ServiceName: name,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "c", Image: "registry.invalid/pause:1",
					VolumeDevices: []corev1.VolumeDevice{{Name: "brick", DevicePath: "/dev/sdb"}},
					VolumeMounts:  []corev1.VolumeMount{{Name: "state", MountPath: "/var/lib/glusterd2"}},
				}}},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{
				claim("state", corev1.PersistentVolumeFilesystem, "1Gi"), claim("brick", corev1.PersistentVolumeBlock, "100Gi"),
			},
		},
	}
}
