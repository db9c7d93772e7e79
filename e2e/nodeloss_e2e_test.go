//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

// TestNodeLossPodMovesAndRejoins: a Kubernetes node running a Gluster pod
// stops reporting (kwok stops heart-beating it). The real node lifecycle
// controller marks it NotReady and evicts the pod after the pod's
// toleration; the pod stays Terminating, as a StatefulSet pod on an
// unreachable node does. The node's storage is network storage (no node
// affinity), so the operator force-deletes the stuck pod (the evictLostPod
// step), the StatefulSet recreates it on the other node of the zone with
// the same name and claims, and the same GD2 peer rejoins: Offline ->
// Online, and the volume that kept taking writes heals. The operator is
// SIGKILLed while the node is down and restarted; the simulator must
// record no data-safety violation. The lost pod is held (podHold) until
// the operator announces its forced delete, so that nothing else can
// replace it first.
func TestNodeLossPodMovesAndRejoins(t *testing.T) {
	alone(t, "it takes a Kubernetes node away from every cluster")
	ctx := context.Background()
	if err := env.CreateNetworkStorage(ctx, 6, "100Gi"); err != nil {
		t.Fatal(err)
	}
	nl := startNodeLoss(t, "nodeloss", ptr.To(framework.NetworkStorageClass))
	ns, victim, pod0, lost, start := nl.ns, nl.victim, nl.pod0, nl.lost, nl.start
	if !t.Run("the node lifecycle controller marks the node NotReady and the Gluster node goes Offline", nl.goesOffline) {
		return
	}

	if !t.Run("the operator, SIGKILLed while the node is down, force-deletes the stuck pod after it restarts", func(t *testing.T) {
		restartOperator(t)
		released := false
		err := framework.WaitFor(ctx, 5*time.Minute, func(ctx context.Context) (bool, error) {
			p, err := env.Client.CoreV1().Pods(ns).Get(ctx, objects.NodePodName(victim), metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if p.UID == pod0.UID {
				// Only the operator's forced delete releases the hold.
				if !released && p.DeletionTimestamp != nil && hasEvent(t, ns, victim, states.ReasonEvictingLostPod) {
					if err := releasePod(ctx, ns, victim); err != nil {
						return false, err
					}
					released = true
				}
				return false, fmt.Errorf("the pod is still the lost one (terminating: %t, released: %t)", p.DeletionTimestamp != nil, released)
			}
			if p.Spec.NodeName == "" || !isReady(p) {
				return false, fmt.Errorf("the new pod is on %q, ready %t", p.Spec.NodeName, isReady(p))
			}
			return true, nil
		})
		if err != nil {
			dumpNamespace(t, ns)
			t.Fatalf("waiting for the pod to come back elsewhere: %v", err)
		}
		t.Logf("pod back after %s", time.Since(start).Round(time.Second))
		p, err := env.Client.CoreV1().Pods(ns).Get(ctx, objects.NodePodName(victim), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Spec.NodeName == lost {
			t.Fatalf("the new pod was scheduled on the lost node %s", lost)
		}
		if p.Spec.Hostname != pod0.Spec.Hostname || p.Spec.Subdomain != pod0.Spec.Subdomain {
			t.Errorf("the pod's DNS identity changed: %s.%s -> %s.%s", pod0.Spec.Hostname, pod0.Spec.Subdomain, p.Spec.Hostname, p.Spec.Subdomain)
		}
	}) {
		return
	}

	if !t.Run("the same GlusterNode and GD2 peer rejoin and the volume heals", func(t *testing.T) {
		_, path, evicted := nl.rejoins(t)
		if !evicted {
			t.Errorf("history %v: want the evictLostPod step", path)
		}
		if !strings.Contains(operatorOf(t).Logs(), `"event":"evictLostPod"`) {
			t.Error("the operator's transition log has no evictLostPod line")
		}
		nl.heals(t)
	}) {
		return
	}
}

// TestNodeLossLocalStorageWaits: the same loss, but the Gluster node's
// claims are on node-local PersistentVolumes, which cannot move. The
// operator forces nothing: the evicted pod stays Terminating on its node
// past the point where a pod on network storage would have been
// force-deleted, the GlusterNode stays Offline and says why (the claim
// that pins it) in its Degraded condition. When the Kubernetes node comes
// back, the pod comes back on it with the same claims and the same GD2
// peer rejoins and heals. The operator is SIGKILLed while the node is down.
func TestNodeLossLocalStorageWaits(t *testing.T) {
	alone(t, "it takes a Kubernetes node away from every cluster")
	ctx := context.Background()
	nl := startNodeLoss(t, "localloss", nil)
	if !t.Run("the node lifecycle controller marks the node NotReady and the Gluster node goes Offline", nl.goesOffline) {
		return
	}

	if !t.Run("the operator, SIGKILLed while the node is down, does not force-delete a pod pinned by node-local storage", func(t *testing.T) {
		var pod *corev1.Pod
		err := framework.WaitFor(ctx, 4*time.Minute, func(ctx context.Context) (bool, error) {
			var err error
			if pod, err = env.Client.CoreV1().Pods(nl.ns).Get(ctx, objects.NodePodName(nl.victim), metav1.GetOptions{}); err != nil {
				return false, err
			}
			if pod.UID != nl.pod0.UID {
				return true, nil
			}
			n, err := anthill.OperatorV1alpha1().GlusterNodes(nl.ns).Get(ctx, nl.victim, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			c := apimeta.FindStatusCondition(n.Status.Conditions, operatorv1alpha1.ConditionDegraded)
			if c != nil && c.Reason == states.ReasonLostPodStorageLocal {
				if !strings.Contains(c.Message, "cannot run elsewhere") {
					return false, fmt.Errorf("condition %q does not say why the pod stays", c.Message)
				}
				return true, nil
			}
			return false, fmt.Errorf("pod terminating %t; node %s: %+v", pod.DeletionTimestamp != nil, n.Status.State, c)
		})
		if err != nil {
			dumpNamespace(t, nl.ns)
			t.Fatal(err)
		}
		if pod.UID != nl.pod0.UID {
			t.Fatalf("the held pod %s was replaced by %s while its node was lost", nl.pod0.UID, pod.UID)
		}
		restartOperator(t)
		t.Logf("the GlusterNode reports its pod pinned by local storage after %s", time.Since(nl.start).Round(time.Second))
		// A pod on network storage would be force-deleted once both its
		// deletion grace and the lost-node grace are over; wait past that.
		node, err := env.Client.CoreV1().Nodes().Get(ctx, nl.lost, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		due := pod.DeletionTimestamp.Time
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady && c.LastTransitionTime.Add(testLostNodeGrace).After(due) {
				due = c.LastTransitionTime.Add(testLostNodeGrace)
			}
		}
		time.Sleep(time.Until(due.Add(15 * time.Second)))
		p, err := env.Client.CoreV1().Pods(nl.ns).Get(ctx, objects.NodePodName(nl.victim), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.UID != nl.pod0.UID || p.DeletionTimestamp == nil {
			t.Errorf("15s past the point a movable pod would be force-deleted, the pod is %s (terminating %t), want the lost pod %s still terminating",
				p.UID, p.DeletionTimestamp != nil, nl.pod0.UID)
		}
		n := waitNodeState(t, nl.ns, nl.victim, "Offline", time.Second)
		for _, h := range n.Status.History {
			if h.Event == string(states.NodeEvictLostPod) {
				t.Errorf("history records %s -%s-> %s (%s) for a node on local storage", h.From, h.Event, h.To, h.Reason)
			}
		}
		if hasEvent(t, nl.ns, nl.victim, states.ReasonEvictingLostPod) {
			t.Error("an Event announces a forced delete of a pod pinned by local storage")
		}
	}) {
		return
	}

	if !t.Run("the pod returns on its own node once it is back, and the same peer rejoins and heals", func(t *testing.T) {
		if err := env.RestoreNode(ctx, nl.lost); err != nil {
			t.Fatal(err)
		}
		if err := releasePod(ctx, nl.ns, nl.victim); err != nil {
			t.Fatal(err)
		}
		err := framework.WaitFor(ctx, 3*time.Minute, func(ctx context.Context) (bool, error) {
			p, err := env.Client.CoreV1().Pods(nl.ns).Get(ctx, objects.NodePodName(nl.victim), metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if p.UID == nl.pod0.UID || !isReady(p) {
				return false, fmt.Errorf("pod %s on %q, ready %t", p.UID, p.Spec.NodeName, isReady(p))
			}
			if p.Spec.NodeName != nl.lost {
				return false, fmt.Errorf("the pod came back on %s, not on %s where its local volume is", p.Spec.NodeName, nl.lost)
			}
			return true, nil
		})
		if err != nil {
			dumpNamespace(t, nl.ns)
			t.Fatal(err)
		}
		_, path, evicted := nl.rejoins(t)
		if evicted {
			t.Errorf("history %v: the operator force-deleted a pod pinned by local storage", path)
		}
		nl.heals(t)
	}) {
		return
	}
}

// podHold is a finalizer the node-loss tests put on the victim's pod before
// its Kubernetes node is lost. kwok sometimes still deletes a pod of a
// node whose Lease it no longer holds; the finalizer keeps any delete of
// the lost pod from completing until the test releases it: once the
// operator has announced its forced delete, or once the node is back. So
// the pod is never replaced behind the operator's back, and a run that
// passes has exercised what it claims.
const podHold = "e2e.anthill.gluster.org/hold"

// holdPod adds podHold to the pod of GlusterNode node.
func holdPod(ctx context.Context, ns, node string) error {
	return editPodFinalizers(ctx, ns, node, func(fs []string) []string {
		if slices.Contains(fs, podHold) {
			return fs
		}
		return append(fs, podHold)
	})
}

// releasePod removes podHold from the pod of GlusterNode node.
func releasePod(ctx context.Context, ns, node string) error {
	return editPodFinalizers(ctx, ns, node, func(fs []string) []string {
		return slices.DeleteFunc(fs, func(f string) bool { return f == podHold })
	})
}

func editPodFinalizers(ctx context.Context, ns, node string, edit func([]string) []string) error {
	pods := env.Client.CoreV1().Pods(ns)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := pods.Get(ctx, objects.NodePodName(node), metav1.GetOptions{})
		if err != nil {
			return err
		}
		next := edit(slices.Clone(p.Finalizers))
		if slices.Equal(next, p.Finalizers) {
			return nil
		}
		p.Finalizers = next
		_, err = pods.Update(ctx, p, metav1.UpdateOptions{})
		return err
	})
}

func isReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue && p.DeletionTimestamp == nil
		}
	}
	return false
}

// hasEvent reports whether an Event with reason was recorded on the
// GlusterNode name.
func hasEvent(t *testing.T, ns, name, reason string) bool {
	t.Helper()
	evs, err := env.Client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs.Items {
		if e.InvolvedObject.Kind == "GlusterNode" && e.InvolvedObject.Name == name && e.Reason == reason {
			return true
		}
	}
	return false
}

// nodeLoss is a cluster of three Gluster nodes, one per zone, with a
// replicated volume taking writes, whose zone-1 node's Kubernetes node has
// just been lost.
type nodeLoss struct {
	ns, name string
	g        *gd2.Client
	// victim is the GlusterNode on the lost Kubernetes node lost; before
	// and pod0 are it and its pod just before.
	victim, lost string
	before       operatorv1alpha1.GlusterNode
	pod0         *corev1.Pod
	start        time.Time
}

// startNodeLoss creates the cluster with its claims in storageClass (nil:
// the sample's node-local storage), waits for it, and loses the Kubernetes
// node of its zone-1 Gluster pod; the node is restored when the test ends.
func startNodeLoss(t *testing.T, name string, storageClass *string) *nodeLoss {
	ctx := context.Background()
	nl := &nodeLoss{ns: newNamespace(t), name: name}
	startSim(t, nl.ns, defaultSimOptions)
	if err := env.CreateSimAuthSecret(ctx, nl.ns, name, simOf(t)); err != nil {
		t.Fatal(err)
	}
	c, err := framework.SampleCluster(nl.ns, name, simOf(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if storageClass != nil {
		for i := range c.Spec.NodeTemplates {
			c.Spec.NodeTemplates[i].Storage.StorageClassName = storageClass
		}
	}
	// Short hysteresis windows keep the test short; the deadline stays far
	// away, so the node must come back rather than be replaced.
	c.Spec.FailurePolicy.OfflineGrace = &metav1.Duration{Duration: 5 * time.Second}
	c.Spec.FailurePolicy.RecoveryWindow = &metav1.Duration{Duration: 10 * time.Second}
	// The pods tolerate their node's loss for seconds rather than the
	// minute the operator gives them, through the templates' own
	// tolerations, which win (docs/node-loss.md#tuning).
	for i := range c.Spec.NodeTemplates {
		c.Spec.NodeTemplates[i].Tolerations = append(c.Spec.NodeTemplates[i].Tolerations, lostNodeTolerations(5)...)
	}
	if _, err := anthill.OperatorV1alpha1().GlusterClusters(nl.ns).Create(ctx, c, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	nl.g = gd2Client(t)
	nodes := waitNodes(t, nl.ns, name, 3, 2*time.Minute)
	createReplicatedVolume(t, nl.g, "data")
	if err := simOf(t).Write("data", 50); err != nil {
		t.Fatal(err)
	}
	for n, node := range nodes {
		if node.Spec.Zone == framework.ZoneName(1) {
			nl.victim = n
		}
	}
	nl.before = nodes[nl.victim]
	if nl.pod0, err = env.Client.CoreV1().Pods(nl.ns).Get(ctx, objects.NodePodName(nl.victim), metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	nl.lost = nl.pod0.Spec.NodeName
	if err := holdPod(ctx, nl.ns, nl.victim); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := releasePod(context.Background(), nl.ns, nl.victim); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("release pod of %s: %v", nl.victim, err)
		}
	})
	t.Logf("losing Kubernetes node %s, which runs %s (peer %s)", nl.lost, nl.victim, nl.before.Status.PeerID)
	if err := env.LoseNode(ctx, nl.lost); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.RestoreNode(context.Background(), nl.lost); err != nil {
			t.Errorf("restore node %s: %v", nl.lost, err)
		}
	})
	nl.start = time.Now()
	return nl
}

// goesOffline: the node lifecycle controller marks the lost node NotReady,
// the Gluster node goes Offline, and writes meanwhile leave entries for
// its brick to heal.
func (nl *nodeLoss) goesOffline(t *testing.T) {
	if err := env.WaitNodeNotReady(context.Background(), nl.lost, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	t.Logf("node NotReady after %s", time.Since(nl.start).Round(time.Second))
	waitNodeState(t, nl.ns, nl.victim, "Offline", 2*time.Minute)
	t.Logf("GlusterNode Offline after %s", time.Since(nl.start).Round(time.Second))
	if err := simOf(t).Write("data", 200); err != nil {
		t.Fatal(err)
	}
	if p := pendingHeal(t, nl.g, "data"); p == 0 {
		t.Fatal("writes with a brick down left nothing pending heal")
	}
	noViolations(t)
}

// rejoins waits for the victim to be Online again as the same GlusterNode
// and GD2 peer, holding its brick, through Offline -> Online. It returns
// the node, its history as from-event->to steps, and whether the history
// records the evictLostPod step.
func (nl *nodeLoss) rejoins(t *testing.T) (*operatorv1alpha1.GlusterNode, []string, bool) {
	t.Helper()
	after := waitNodeState(t, nl.ns, nl.victim, "Online", 2*time.Minute)
	t.Logf("GlusterNode Online after %s", time.Since(nl.start).Round(time.Second))
	before := nl.before
	if after.UID != before.UID || after.Status.PeerID != before.Status.PeerID || after.Status.Address != before.Status.Address {
		t.Errorf("identity changed: uid %s -> %s, peer %s -> %s, address %s -> %s",
			before.UID, after.UID, before.Status.PeerID, after.Status.PeerID, before.Status.Address, after.Status.Address)
	}
	peer, err := nl.g.GetPeer(context.Background(), before.Status.PeerID)
	if err != nil || !peer.Online {
		t.Fatalf("peer %s after the outage: %+v, %v; want the same peer online", before.Status.PeerID, peer, err)
	}
	if n := bricksByPeer(t, nl.g, "data")[before.Status.PeerID]; n != 1 {
		t.Errorf("the peer holds %d brick(s) of data, want its one brick back", n)
	}
	var path []string
	evicted := false
	for _, h := range after.Status.History {
		path = append(path, h.From+"-"+h.Event+"->"+h.To)
		if h.Event == string(states.NodeEvictLostPod) && h.Reason == states.ReasonEvictingLostPod {
			evicted = true
		}
	}
	if !strings.Contains(strings.Join(path, " "), "Offline-peerRecovered->Online") {
		t.Errorf("history %v: want Offline -> Online", path)
	}
	return after, path, evicted
}

// heals waits until nothing of the volume is pending heal and its heal
// machine reports Healthy, then checks the simulator saw no violation.
func (nl *nodeLoss) heals(t *testing.T) {
	t.Helper()
	err := framework.WaitFor(context.Background(), 2*time.Minute, func(ctx context.Context) (bool, error) {
		if p := pendingHeal(t, nl.g, "data"); p > 0 {
			return false, fmt.Errorf("%d entries pending heal", p)
		}
		cl, err := anthill.OperatorV1alpha1().GlusterClusters(nl.ns).Get(ctx, nl.name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, v := range cl.Status.Volumes {
			if v.Name == "data" && v.State == "Healthy" {
				return true, nil
			}
		}
		return false, fmt.Errorf("volume data not Healthy in status: %+v", cl.Status.Volumes)
	})
	if err != nil {
		dumpNamespace(t, nl.ns)
		t.Fatalf("waiting for the volume to heal: %v", err)
	}
	t.Logf("healed after %s", time.Since(nl.start).Round(time.Second))
	noViolations(t)
}

// lostNodeTolerations tolerates a node's not-ready and unreachable taints
// for seconds.
func lostNodeTolerations(seconds int64) []corev1.Toleration {
	var tol []corev1.Toleration
	for _, key := range []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable} {
		tol = append(tol, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists,
			Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(seconds)})
	}
	return tol
}
