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
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"github.com/gluster/anthill/e2e/framework"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
)

// TestLVMClaimServersOfAZoneKeepToDistinctHosts: the sample cluster's
// servers are on LVM claims, and its zone-1 template asks for one server
// more than zone-1 has Kubernetes nodes. The real scheduler puts each of
// the others on a host of its own and leaves the last Pending on the pod
// anti-affinity: two of them on one host would give GD2 two volume groups
// of one name.
func TestLVMClaimServersOfAZoneKeepToDistinctHosts(t *testing.T) {
	sideBySide(t)
	ctx := context.Background()
	ns := newNamespace(t)
	const name, zone = "lvmapart", "zone-1"
	hosts, err := env.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: framework.ZoneLabel + "=" + zone})
	if err != nil {
		t.Fatal(err)
	}
	h := len(hosts.Items)
	if h == 0 {
		t.Fatalf("no Kubernetes node in %s", zone)
	}
	growLocalStorage(t)
	createClusterEdited(t, ns, name, 1, defaultSimOptions, func(c *operatorv1alpha1.GlusterCluster) {
		for i := range c.Spec.NodeTemplates {
			if c.Spec.NodeTemplates[i].Zone == zone {
				c.Spec.NodeTemplates[i].Nodes = ptr.To(int32(h + 1))
			}
		}
	})
	sel := labels.SelectorFromSet(map[string]string{
		objects.LabelCluster: name, objects.LabelComponent: objects.ComponentGlusterNode, objects.LabelZone: zone,
	}).String()
	err = framework.WaitFor(ctx, 3*time.Minute, func(ctx context.Context) (bool, error) {
		pods, err := env.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			return false, err
		}
		if len(pods.Items) != h+1 {
			return false, fmt.Errorf("%d pods in %s, want %d", len(pods.Items), zone, h+1)
		}
		onHost := map[string]string{}
		var pending []string
		for _, p := range pods.Items {
			if p.Labels[objects.LabelLVMClaims] != objects.LVMClaimsTrue {
				return false, fmt.Errorf("pod %s is not labelled as on LVM claims: %v", p.Name, p.Labels)
			}
			if p.Spec.NodeName == "" {
				if !unschedulableOnAntiAffinity(&p) {
					return false, fmt.Errorf("pod %s is not scheduled, but not for its anti-affinity: %v", p.Name, p.Status.Conditions)
				}
				pending = append(pending, p.Name)
				continue
			}
			if other, ok := onHost[p.Spec.NodeName]; ok {
				return false, fmt.Errorf("pods %s and %s share host %s", other, p.Name, p.Spec.NodeName)
			}
			onHost[p.Spec.NodeName] = p.Name
		}
		if len(onHost) != h || len(pending) != 1 {
			return false, fmt.Errorf("%d pods on distinct hosts (want %d), pending %v (want one)", len(onHost), h, pending)
		}
		return true, nil
	})
	if err != nil {
		dumpNamespace(t, ns)
		t.Fatal(err)
	}
}

// unschedulableOnAntiAffinity reports whether the scheduler left p
// unscheduled and named the pod anti-affinity as a reason.
func unschedulableOnAntiAffinity(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return strings.Contains(c.Message, "anti-affinity")
		}
	}
	return false
}

// hostsForLVMClaims gives every zone perZone Kubernetes nodes, each with
// the local PVs every other node has: a cluster's servers on LVM claims
// keep to distinct hosts, so a zone needs a host for each of its servers,
// and one more for a replacement that joins while the server it replaces
// drains.
func hostsForLVMClaims(tb testing.TB, perZone int) {
	tb.Helper()
	ctx := context.Background()
	if err := env.CreateFakeNodes(ctx, 3, perZone); err != nil {
		tb.Fatal(err)
	}
	localPVsMu.Lock()
	defer localPVsMu.Unlock()
	if err := env.CreateLocalStorageRange(ctx, 0, localPVs, "100Gi"); err != nil {
		tb.Fatal(err)
	}
}
