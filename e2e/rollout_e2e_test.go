//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/e2e/framework"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
)

// TestTemplateChangeRollsNodeByNode changes what the servers' pods look
// like without changing the version, while the simulator keeps writing:
// a toleration added to every node template reaches every running server
// through the upgrade machine, one heal-gated node at a time, with the
// same checks as a version upgrade (no replica set ever two bricks down,
// each node only after the previous one healed) and the operator
// SIGKILLed mid-roll. Then a changed CSI image tag, again at the same
// version, reaches the CSI controller and every node plugin pod.
func TestTemplateChangeRollsNodeByNode(t *testing.T) {
	aloneWithCSI(t, "its CSI image change needs the CSI driver, whose name is fixed, so one cluster at a time runs it (docs/csi.md)")
	ns := newNamespace(t)
	const name = "tmpl"
	createClusterWithSim(t, ns, name, 2, framework.SimOptions{Seed: 5, WriteRate: 100, HealRate: 25, StartupDelay: 2 * time.Second})
	g := gd2Client(t)
	waitNodes(t, ns, name, 6, 3*time.Minute)
	vols := []string{"tmpla", "tmplb"}
	for _, v := range vols {
		createReplicatedVolume(t, g, v)
	}
	waitVolumesHealthy(t, ns, name, vols, 2*time.Minute)

	before, err := framework.ClusterNodes(context.Background(), anthill, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	oldRevision := map[string]string{}
	for _, n := range before {
		if n.Status.Revision == "" {
			t.Fatalf("node %s records no template revision", n.Name)
		}
		oldRevision[n.Name] = n.Status.Revision
	}

	tol := corev1.Toleration{Key: "storage.example/dedicated", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	mon := startUpgradeMonitor(t, ns, name, g, vols)
	edited := time.Now()
	editCluster(t, ns, name, func(c *operatorv1alpha1.GlusterCluster) {
		for i := range c.Spec.NodeTemplates {
			c.Spec.NodeTemplates[i].Tolerations = append(c.Spec.NodeTemplates[i].Tolerations, tol)
		}
	})

	// SIGKILL the operator while the second node is being rolled.
	err = framework.WaitFor(context.Background(), 5*time.Minute, func(ctx context.Context) (bool, error) {
		nodes, desc, err := nodeStates(ctx, ns, name)
		if err != nil {
			return false, err
		}
		done, rolling := 0, 0
		for _, n := range nodes {
			if n.Status.State == "Online" && n.Status.Revision != oldRevision[n.Name] {
				done++
			}
			if slices.Contains(upgradeStates, n.Status.State) {
				rolling++
			}
		}
		if done == 1 && rolling == 1 {
			return true, nil
		}
		return false, fmt.Errorf("%d node(s) rolled, %d rolling: %s", done, rolling, desc)
	})
	if err != nil {
		dumpNamespace(t, ns)
		t.Fatalf("waiting for the second node to be rolled: %v", err)
	}
	restartOperator(t)
	t.Log("operator SIGKILLed while the second node was being rolled")

	c := waitRunState(t, ns, name, "Complete", edited, 10*time.Minute)
	mon.stop()
	checkRolledOneByOne(t, ns, name, mon, func(n operatorv1alpha1.GlusterNode, pod *corev1.Pod) error {
		if !slices.Contains(pod.Spec.Tolerations, tol) {
			return fmt.Errorf("the pod lacks the new toleration: %v", pod.Spec.Tolerations)
		}
		if rev := pod.Annotations[objects.AnnotationRevision]; rev == oldRevision[n.Name] || rev != n.Status.Revision {
			return fmt.Errorf("pod revision %s, status.revision %s, old revision %s", rev, n.Status.Revision, oldRevision[n.Name])
		}
		if pod.Annotations[objects.AnnotationVersion] != "4.1.0" || n.Status.Version != "4.1.0" {
			return fmt.Errorf("the version moved: pod %s, status %s", pod.Annotations[objects.AnnotationVersion], n.Status.Version)
		}
		return nil
	})
	if up := c.Status.Upgrade; up.FromVersion != "4.1.0" || up.ToVersion != "4.1.0" {
		t.Errorf("the rollout is recorded as %s -> %s, want 4.1.0 -> 4.1.0", up.FromVersion, up.ToVersion)
	}
	noViolations(t)

	// A changed CSI image tag at the same version.
	const fileImage = "quay.io/gluster/csi-file:4.1.0-fix1"
	edited = time.Now()
	editCluster(t, ns, name, func(c *operatorv1alpha1.GlusterCluster) {
		if c.Spec.CSI == nil {
			c.Spec.CSI = &operatorv1alpha1.CSISpec{}
		}
		c.Spec.CSI.FileImage = fileImage
	})
	waitRunState(t, ns, name, "Complete", edited, 5*time.Minute)
	ctx := context.Background()
	ctl, err := env.Client.AppsV1().Deployments(ns).Get(ctx, objects.CSIControllerName(name, operatorv1alpha1.GlusterDriverFile), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := env.Client.AppsV1().DaemonSets(ns).Get(ctx, objects.CSINodeDaemonSetNameOf(name, operatorv1alpha1.GlusterDriverFile), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for what, spec := range map[string]corev1.PodSpec{"controller": ctl.Spec.Template.Spec, "node plugin DaemonSet": ds.Spec.Template.Spec} {
		if !slices.Contains(slices.Collect(maps.Values(objects.ContainerImages(spec))), fileImage) {
			t.Errorf("the %s runs %v, want %s", what, objects.ContainerImages(spec), fileImage)
		}
	}
	err = framework.WaitFor(ctx, time.Minute, func(ctx context.Context) (bool, error) {
		pods, err := env.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: objects.LabelCluster + "=" + name + "," + objects.LabelComponent + "=" + objects.ComponentCSINode})
		if err != nil {
			return false, err
		}
		if len(pods.Items) == 0 {
			return false, fmt.Errorf("no node plugin pods")
		}
		for _, p := range pods.Items {
			if !slices.Contains(slices.Collect(maps.Values(objects.ContainerImages(p.Spec))), fileImage) {
				return false, fmt.Errorf("node plugin pod %s on %s runs %v", p.Name, p.Spec.NodeName, objects.ContainerImages(p.Spec))
			}
		}
		return true, nil
	})
	if err != nil {
		t.Errorf("node plugin pods: %v", err)
	}
	noViolations(t)
}
