//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
)

// A GlusterCluster's own pods on real nodes: three kubelets on this one
// machine (GD2 keeps a replica set's bricks in distinct zones, and a
// Kubernetes node has one zone), the operator's image in a pod there
// making a cluster whose three GD2 pods and etcd pod run for real (the
// test images hack/build-test-images.sh builds: glusterd2 over Debian's
// glusterfs 10.3, the control plane's etcd), on local PersistentVolumes
// of the nodes; its servers use GD2's loop provisioner (storage.provisioner:
// loop), since this kernel has no device-mapper for LVM. Through the
// operator the peers join and their devices are added; the test then
// creates and starts a replica-3 smart volume through GD2's REST API, as
// the CSI driver would, writes files through a FUSE mount in a client pod
// and reads every byte back, from the mount and from each brick. Then:
// one GD2 container SIGKILLed (as a liveness restart does it), its brick
// back online with no help; one brick process SIGKILLed, reaped, and
// started again by the operator's force start; and the GD2 pod with the
// most bricks decommissioned through the request annotation, its bricks
// moved by replace-brick to a new pod of its zone and healed there, the
// data read back.
func TestGlusterPodsOnARealNode(t *testing.T) {
	onRealGluster(t, "installs anthill cluster-wide and runs a kubelet; the GlusterCluster's GD2 and etcd pods run on it")
	ctx := context.Background()
	rc := startRealCluster(t, realClusterOptions{name: "real"})
	ns, name, c, step := rc.ns, rc.name, rc.c, rc.step
	realNodes, nodes, gd2Pods, secret, g := rc.realNodes, rc.nodes, rc.gd2Pods, rc.secret, rc.g
	images := rc.images

	const vol = "data"
	if _, err := g.CreateVolume(ctx, gd2.VolumeCreateRequest{Name: vol, Size: 512 << 20, Replica: 3, Provisioner: objects.ProvisionerLoop}); err != nil {
		t.Fatalf("create a replica-3 smart volume: %v", err)
	}
	// The volume goes before the cluster, as a CSI volume goes with its
	// PersistentVolume: deleting the cluster drains its nodes one at a
	// time, and a brick of a volume still there has nowhere to move.
	t.Cleanup(func() {
		ctx := context.Background()
		g := realGD2(t, ns, name, secret, "")
		if _, err := g.StopVolume(ctx, vol); err != nil {
			t.Errorf("stop volume %s: %v", vol, err)
		}
		if err := g.DeleteVolume(ctx, vol); err != nil {
			t.Errorf("delete volume %s: %v", vol, err)
		}
	})
	if _, err := g.StartVolume(ctx, vol, false); err != nil {
		t.Fatalf("start it: %v", err)
	}
	bricks := waitBricksOnline(t, g, vol, 3, time.Minute)
	step("replica-3 smart volume %s created and started: 3 bricks online (%s)", vol, brickPIDs(bricks))

	// The client mounts through the management Service's name, as an
	// admin would: any GD2 serves the volume file, and the mount outlives
	// the server that first served it. A GD2 pod's own name is often too
	// long for Gluster's mount helper, which drops every server name of
	// 64 characters or more (its HOST_NAME_MAX check): shown below.
	client := startMountPod(t, ns, images["glusterd2"].ref, objects.ManagementHost(c)+":/"+vol)
	pid := waitMountPID(t, realNodes, ns, client)
	if host := objects.NodePodHost(ns, name, nodes[firstKey(nodes)].Name); len(host) >= 64 {
		out, err := inPod(pid, "mount", "-t", "glusterfs", host+":/"+vol, "/mnt")
		if err == nil || !strings.Contains(out, "No valid servers") {
			t.Errorf("mount.glusterfs given the %d-character server name %s: %v\n%s; want it refused", len(host), host, err, out)
		}
		step("mount.glusterfs refuses the GD2 pod's own %d-character name: %s", len(host), strings.TrimSpace(strings.SplitN(out, "\n", 2)[0]))
	}
	mnt := framework.ProcessPath(pid, filepath.Join("mnt", vol))
	written := writeFiles(t, mnt, 24, 256<<10)
	step("FUSE mount in pod %s: wrote %d files, %d bytes", client, len(written), totalBytes(written))
	readBack(t, mnt, written)
	step("read every byte back: checksums equal")
	bricksHold(t, realNodes, ns, name, bricks, written)
	step("each of the 3 bricks holds every file, bytes equal (read in its GD2 pod's mount namespace)")

	// A GD2 container killed: the kubelet starts it again and GD2 mounts
	// and starts its brick itself.
	victim := gd2Pods[1]
	gpid := containerPID(t, realNodes[victim.Spec.NodeName], victim, objects.ContainerGD2)
	if err := syscall.Kill(gpid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	step("SIGKILLed glusterd2 (pid %d) of %s", gpid, victim.Name)
	err := framework.WaitFor(ctx, 3*time.Minute, func(ctx context.Context) (bool, error) {
		p, err := env.Client.CoreV1().Pods(ns).Get(ctx, victim.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, s := range p.Status.ContainerStatuses {
			if s.RestartCount > 0 && s.Ready {
				return true, nil
			}
		}
		return false, fmt.Errorf("pod %s: %s", p.Name, podState(*p))
	})
	if err != nil {
		t.Fatal(err)
	}
	after := waitBricksOnline(t, g, vol, 3, 2*time.Minute)
	step("GD2 container restarted, every brick online again with no help (%s)", brickPIDs(after))
	readBack(t, mnt, written)
	step("read every byte back again")

	// A brick process SIGKILLed: GD2 reports it offline, the operator's
	// heal machine force-starts the volume's bricks after the offline
	// grace (forceStartBricks, on the ledger), and GD2 starts a new brick
	// process. The killed one is reaped (the pod's pause process is PID 1:
	// shareProcessNamespace), so no zombie passes GD2's kill(pid, 0) check
	// for a running brick.
	bvictim := gd2Pods[2]
	bnode := bvictim.Labels[objects.LabelNode]
	var brick gd2.BrickStatus
	for _, b := range after {
		if b.Info.PeerID == nodes[bnode].Status.PeerID {
			brick = b
		}
	}
	if brick.PID == 0 {
		t.Fatalf("no running brick of %s on %s: %s", vol, bnode, brickPIDs(after))
	}
	bpod, err := env.Client.CoreV1().Pods(ns).Get(ctx, bvictim.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	podPID := containerPID(t, realNodes[bpod.Spec.NodeName], *bpod, objects.ContainerGD2)
	bpid, err := hostPID(podPID, brick.PID)
	if err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	if err := syscall.Kill(bpid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	step("SIGKILLed brick %s of %s (glusterfsd, pid %d in the pod, %d on the host)", brick.Info.Path, bvictim.Name, brick.PID, bpid)
	var restarted gd2.BrickStatus
	err = framework.WaitFor(ctx, 3*time.Minute, func(ctx context.Context) (bool, error) {
		bs, err := g.BricksStatus(ctx, vol)
		if err != nil {
			return false, err
		}
		for _, b := range bs {
			if b.Info.ID == brick.Info.ID {
				restarted = b
				return b.Online && b.PID != brick.PID && b.Port > 0, fmt.Errorf("brick online %t pid %d port %d", b.Online, b.PID, b.Port)
			}
		}
		return false, fmt.Errorf("no brick %s", brick.Info.ID)
	})
	if err != nil {
		dumpNamespace(t, ns)
		t.Fatalf("the killed brick %s: %v", brick.Info.Path, err)
	}
	back := time.Since(killed)
	if z, err := zombies(podPID); err != nil || len(z) > 0 {
		t.Errorf("zombies in pod %s: %v (%v)", bvictim.Name, z, err)
	}
	cl, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	started := false
	for _, e := range cl.Status.Ledger {
		if e.Action == operatorv1alpha1.LedgerActionForceStartBricks && e.Node == bnode && e.Volume == vol && e.Time.After(killed.Add(-time.Second)) {
			started = true
		}
	}
	if !started {
		t.Errorf("the ledger records no force start of %s's bricks on %s after the kill: %v", vol, bnode, cl.Status.Ledger)
	}
	step("the heal machine force-started %s (ledger: forceStartBricks on %s): the brick online again as pid %d port %d, %.1fs after the kill; no zombie in the pod", vol, bnode, restarted.PID, restarted.Port, back.Seconds())
	readBack(t, mnt, written)
	step("read every byte back again")

	// The GD2 pod with the most bricks decommissioned as an admin does it
	// (the request annotation): its zone's template makes a new node on
	// the same host, the drain moves each brick there by GD2
	// replace-brick and heals it (healReplacement: self-heal on, a full
	// heal), then deletes the peer, the pod and its claims.
	decommissionMostBricks(t, g, realNodes, ns, name, vol, secret, mnt, written, step)
}

// onRealGluster skips the test unless it runs in the real-node set
// (onRealNode) and ANTHILL_E2E_REAL_GLUSTER is set: until the tests of a
// GlusterCluster's own pods on real nodes pass end to end on CI's machine
// they stay out of make test's real-node set (docs/testing.md says how far
// they get).
func onRealGluster(t *testing.T, why string) {
	t.Helper()
	onRealNode(t, why)
	if os.Getenv("ANTHILL_E2E_REAL_GLUSTER") == "" {
		t.Skip("ANTHILL_E2E_REAL_GLUSTER is unset: the GlusterCluster's own pods on the real node run only when asked")
	}
}

// realCluster is a GlusterCluster whose GD2 and etcd pods run on three
// real nodes, one per zone, Online: its peers joined and their loop
// devices added through the operator.
type realCluster struct {
	ns, name  string
	c         *operatorv1alpha1.GlusterCluster
	images    map[string]testImage
	realNodes map[string]*framework.RealNode
	nodes     map[string]operatorv1alpha1.GlusterNode
	gd2Pods   []corev1.Pod
	secret    []byte
	g         *gd2.Client
	step      func(format string, args ...any)
}

// realClusterOptions shape startRealCluster's cluster.
type realClusterOptions struct {
	// name is the GlusterCluster's.
	name string
	// images are imported into each node beside the GD2, etcd and
	// operator images.
	images map[string]testImage
	// operatorArgs are passed to the operator after the test's own.
	operatorArgs []string
	// csi is the cluster's spec.csi.
	csi *operatorv1alpha1.CSISpec
}

// startRealCluster starts three real nodes, installs the operator's image
// on them as users do (kustomize), and makes a GlusterCluster of one GD2
// pod per node's zone on local volumes, its servers on GD2's loop
// provisioner (this kernel has no device-mapper for LVM); it returns once
// the three nodes are Online. Everything goes when the test ends: the
// cluster (while the operator still runs: its finalizer is the
// operator's), the operator, the nodes.
func startRealCluster(t *testing.T, opts realClusterOptions) *realCluster {
	t.Helper()
	ctx := context.Background()
	root := framework.RepoRoot()
	begin := time.Now()
	rc := &realCluster{name: opts.name}
	rc.step = func(format string, args ...any) {
		t.Logf("%6.1fs  %s", time.Since(begin).Seconds(), fmt.Sprintf(format, args...))
	}
	step := rc.step

	rc.images = buildTestImages(t, root, "gluster")
	images := rc.images
	operator := buildOperatorImage(t, root)
	step("images built: %s, %s", images["glusterd2"].ref, images["etcd"].ref)
	archives := []string{operator.archive, images["glusterd2"].archive, images["etcd"].archive}
	for _, im := range opts.images {
		archives = append(archives, im.archive)
	}

	// The local volumes' directories outlive the node's pods: made before
	// the node, removed after it stopped.
	volumes := t.TempDir()
	// GD2's planner puts a replica set's bricks in distinct zones (the
	// peer's _zone, which the operator sets from the server's zone at
	// join and GD2 lets nobody change), and a Kubernetes node has one
	// zone: three real nodes on this one machine, a zone each, one GD2
	// pod on each.
	zones := []string{"real-a", "real-b", "real-c"}
	rc.realNodes = map[string]*framework.RealNode{}
	var nodeList []*framework.RealNode
	for _, z := range zones {
		node, err := env.StartRealNode(ctx, framework.RealNodeOptions{Name: z, Untainted: true, ClusterDNS: true})
		if err != nil {
			t.Fatalf("start the real node %s: %v", z, err)
		}
		t.Cleanup(func() {
			node.Stop()
			if err := node.Leftovers(); err != nil {
				t.Errorf("the stopped real node %s left behind: %v", node.Name, err)
			}
		})
		rc.realNodes[node.Name] = node
		nodeList = append(nodeList, node)
		patchNodeLabel(t, node.Name, objects.ZoneLabel, z)
		for _, archive := range archives {
			if err := node.ImportImage(ctx, archive); err != nil {
				t.Fatal(err)
			}
		}
		step("real node %s Ready, images imported", node.Name)
	}
	// The etcd pod takes no placement from the spec: with the kwok nodes
	// cordoned the real node is the scheduler's only choice.
	cordonKwokNodes(t)

	args := append([]string{"--etcd-image=" + images["etcd"].ref, "--max-wait=5s", "--heal-interval=3s", "--gd2-timeout=10s"}, opts.operatorArgs...)
	kustomizeInstall(t, root, operator, "apply", args...)
	t.Cleanup(func() { kustomizeInstall(t, root, operator, "delete") })

	ns := env.Namespace(t)
	rc.ns = ns
	name := rc.name
	// Per node: etcd's claim, a GD2 pod's state and brick claims, and
	// those of the GD2 pod that replaces a decommissioned one in its zone.
	class := localVolumes(t, nodeList, volumes, 5, "2Gi")
	rc.c = &operatorv1alpha1.GlusterCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: operatorv1alpha1.GlusterClusterSpec{
			Mode:          operatorv1alpha1.ClusterModeManual,
			Gluster:       &operatorv1alpha1.GlusterServerSpec{Version: "4.1.0", Image: images["glusterd2"].ref},
			NodeTemplates: templatesPerZone(zones, class),
			// A brick offline on a live peer is force-started by the
			// heal machine after the offline grace (30 s by default).
			FailurePolicy: &operatorv1alpha1.FailurePolicy{OfflineGrace: &metav1.Duration{Duration: 5 * time.Second}},
			CSI:           opts.csi,
		},
	}
	err := framework.WaitFor(ctx, time.Minute, func(ctx context.Context) (bool, error) {
		_, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Create(ctx, rc.c, metav1.CreateOptions{})
		return err == nil, err
	})
	if err != nil {
		t.Fatal(err)
	}
	// The cluster goes while the operator still runs (its finalizer is
	// the operator's), before the operator is uninstalled.
	t.Cleanup(func() {
		ctx := context.Background()
		start := time.Now()
		_ = anthill.OperatorV1alpha1().GlusterClusters(ns).Delete(ctx, name, metav1.DeleteOptions{})
		err := framework.WaitFor(ctx, 2*time.Minute, func(ctx context.Context) (bool, error) {
			_, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			_, desc, _ := nodeStates(ctx, ns, name)
			return false, fmt.Errorf("cluster %s still there (%v), nodes %s", name, err, desc)
		})
		if err != nil {
			dumpNamespace(t, ns)
			t.Errorf("delete the cluster: %v", err)
			return
		}
		step("cluster deleted in %.1fs", time.Since(start).Seconds())
	})
	// Online: the pod runs, the peer joined and its devices are added.
	rc.nodes = waitOnline(t, ns, name, 3, 4*time.Minute)
	step("3 GD2 pods and etcd running; through the operator the 3 peers joined and their devices were added")

	pods, err := env.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		comp := p.Labels[objects.LabelComponent]
		if comp != objects.ComponentGlusterNode && comp != objects.ComponentEtcd {
			continue
		}
		if rc.realNodes[p.Spec.NodeName] == nil {
			t.Errorf("pod %s runs on %q, not a real node", p.Name, p.Spec.NodeName)
		}
		if comp == objects.ComponentGlusterNode {
			rc.gd2Pods = append(rc.gd2Pods, p)
		}
	}
	if len(rc.gd2Pods) != 3 {
		t.Fatalf("%d GD2 pods, want 3", len(rc.gd2Pods))
	}
	secret, err := env.Client.CoreV1().Secrets(ns).Get(ctx, objects.AuthSecretName(name), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rc.secret = secret.Data[objects.AuthSecretKey]
	rc.g = realGD2(t, ns, name, rc.secret, "")
	peers, err := rc.g.ListPeers(ctx, gd2.Filter{})
	if err != nil || len(peers) != 3 {
		t.Fatalf("GD2 peers %d (%v), want 3", len(peers), err)
	}
	for _, n := range rc.nodes {
		devs, err := rc.g.ListDevices(ctx, n.Status.PeerID)
		if err != nil || len(devs) != 1 || devs[0].Provisioner != objects.ProvisionerLoop {
			t.Errorf("node %s's devices %+v (%v): want its one loop device", n.Name, devs, err)
		}
	}
	return rc
}

// decommissionMostBricks decommissions the node of cluster with the most
// bricks of vol and checks that its bricks moved to a new node of its zone
// and healed: every brick holds the bytes written, which read back through
// the mount.
func decommissionMostBricks(t *testing.T, g *gd2.Client, realNodes map[string]*framework.RealNode, ns, cluster, vol string, secret []byte, mnt string, written []writtenFile, step func(string, ...any)) {
	t.Helper()
	ctx := context.Background()
	nodes, _, err := nodeStates(ctx, ns, cluster)
	if err != nil {
		t.Fatal(err)
	}
	bs, err := g.BricksStatus(ctx, vol)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, b := range bs {
		count[b.Info.PeerID]++
	}
	var victim string
	for n, gn := range nodes {
		if victim == "" || count[gn.Status.PeerID] > count[nodes[victim].Status.PeerID] || (count[gn.Status.PeerID] == count[nodes[victim].Status.PeerID] && n < victim) {
			victim = n
		}
	}
	decommissionNode(t, realNodes, ns, cluster, vol, victim, count[nodes[victim].Status.PeerID], secret, mnt, written, step)
}

// decommissionNode decommissions victim, a node of cluster holding bricks
// of vol's, through the request annotation, as an admin does: its zone's
// template makes a new node on the same host, the drain moves each brick
// there by GD2 replace-brick and heals it (healReplacement: self-heal on,
// a full heal), then deletes the peer, the pod and its claims. Every
// brick, the replacements included, must then hold the files written,
// and the mount mnt read them back.
func decommissionNode(t *testing.T, realNodes map[string]*framework.RealNode, ns, cluster, vol, victim string, bricks int, secret []byte, mnt string, written []writtenFile, step func(string, ...any)) {
	t.Helper()
	ctx := context.Background()
	nodes, _, err := nodeStates(ctx, ns, cluster)
	if err != nil {
		t.Fatal(err)
	}
	peer, zone := nodes[victim].Status.PeerID, nodes[victim].Spec.Zone
	// GD2 is asked through a pod that stays.
	g := realGD2(t, ns, cluster, secret, objects.NodePodName(victim))
	start := time.Now()
	requestOnNode(t, ns, victim, objects.RequestDecommission)
	step("decommission requested on %s (zone %s, %d brick(s) of %s)", victim, zone, bricks, vol)
	waitNodeState(t, ns, victim, "", 6*time.Minute)
	step("%s drained and removed in %.1fs", victim, time.Since(start).Seconds())

	now, _, err := nodeStates(ctx, ns, cluster)
	if err != nil {
		t.Fatal(err)
	}
	var added string
	for n, gn := range now {
		if _, old := nodes[n]; !old && gn.Spec.Zone == zone {
			added = n
		}
	}
	if added == "" {
		t.Fatalf("no new node in zone %s after the decommission: %v", zone, now)
	}
	after := waitBricksOnline(t, g, vol, 3, 2*time.Minute)
	moved := 0
	for _, b := range after {
		if b.Info.PeerID == peer {
			t.Errorf("brick %s is still on the decommissioned peer", b.Info.Path)
		}
		if b.Info.PeerID == now[added].Status.PeerID {
			moved++
		}
	}
	if moved != bricks {
		t.Errorf("%d brick(s) on the new node %s, want the %d moved", moved, added, bricks)
	}
	c, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, cluster, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	acts := map[string]int{}
	for _, e := range c.Status.Ledger {
		if e.Node == victim && e.Time.After(start.Add(-time.Second)) {
			acts[e.Action]++
		}
	}
	for _, a := range []string{operatorv1alpha1.LedgerActionReplaceBrick, operatorv1alpha1.LedgerActionHealReplacement, operatorv1alpha1.LedgerActionDeletePeer, operatorv1alpha1.LedgerActionDeleteWorkload} {
		if acts[a] == 0 {
			t.Errorf("the ledger records no %s for %s: %v", a, victim, acts)
		}
	}
	step("bricks moved by replace-brick to the new node %s of zone %s and healed (ledger: %v); 3 bricks online (%s)", added, zone, acts, brickPIDs(after))
	bricksHold(t, realNodes, ns, cluster, after, written)
	step("each brick, the replacement included, holds every file, bytes equal")
	readBack(t, mnt, written)
	step("read every byte back through the mount")
}

// realGD2 is a client of the GD2 REST API of cluster's first running GD2
// pod other than except (the test process reaches pod addresses, not
// Service ones).
func realGD2(t *testing.T, ns, cluster string, secret []byte, except string) *gd2.Client {
	t.Helper()
	pods, err := env.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: objects.LabelCluster + "=" + cluster + "," + objects.LabelComponent + "=" + objects.ComponentGlusterNode})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Name != except && p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" && p.DeletionTimestamp == nil {
			g, err := gd2.New(gd2.Options{Endpoint: "http://" + p.Status.PodIP + ":24007", User: "glustercli", Secret: string(secret), Timeout: 60 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			return g
		}
	}
	t.Fatalf("no running GD2 pod of %s but %q", cluster, except)
	return nil
}

// bricksHold checks that every brick of bricks holds each file with the
// bytes written, read from the brick's directory in its GD2 pod's mount
// namespace (where GD2 loop-mounted it).
func bricksHold(t *testing.T, realNodes map[string]*framework.RealNode, ns, cluster string, bricks []gd2.BrickStatus, files []writtenFile) {
	t.Helper()
	ctx := context.Background()
	nodes, _, err := nodeStates(ctx, ns, cluster)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bricks {
		var pod *corev1.Pod
		for _, n := range nodes {
			if n.Status.PeerID == b.Info.PeerID {
				if pod, err = env.Client.CoreV1().Pods(ns).Get(ctx, objects.NodePodName(n.Name), metav1.GetOptions{}); err != nil {
					t.Fatal(err)
				}
			}
		}
		if pod == nil {
			t.Fatalf("brick %s: no node has peer %s", b.Info.Path, b.Info.PeerID)
		}
		pid := containerPID(t, realNodes[pod.Spec.NodeName], *pod, objects.ContainerGD2)
		for _, f := range files {
			got, err := os.ReadFile(framework.ProcessPath(pid, filepath.Join(b.Info.Path, f.name)))
			if err != nil {
				t.Fatalf("brick %s of %s: %v", b.Info.Path, pod.Name, err)
			}
			if sha256.Sum256(got) != f.sum {
				t.Fatalf("brick %s of %s: %s holds %d bytes that differ from the %d written", b.Info.Path, pod.Name, f.name, len(got), f.size)
			}
		}
	}
}

// hostPID is the host pid of the process numbered pid in the PID namespace
// of the host process ref (a pod's).
func hostPID(ref, pid int) (int, error) {
	var found int
	err := inPIDNamespace(ref, func(host int, status map[string]string) {
		f := strings.Fields(status["NSpid"])
		if len(f) > 0 && f[len(f)-1] == strconv.Itoa(pid) {
			found = host
		}
	})
	if err == nil && found == 0 {
		err = fmt.Errorf("no process %d in the PID namespace of %d", pid, ref)
	}
	return found, err
}

// zombies lists the zombie processes in the PID namespace of the host
// process ref, as "pid name".
func zombies(ref int) ([]string, error) {
	var out []string
	err := inPIDNamespace(ref, func(host int, status map[string]string) {
		if strings.HasPrefix(status["State"], "Z") {
			out = append(out, fmt.Sprintf("%d %s", host, status["Name"]))
		}
	})
	return out, err
}

// inPIDNamespace calls fn with the host pid and /proc status fields of
// every process in the PID namespace of the host process ref.
func inPIDNamespace(ref int, fn func(host int, status map[string]string)) error {
	want, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", ref))
	if err != nil {
		return err
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return err
	}
	for _, e := range entries {
		host, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", host)); err != nil || ns != want {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", host))
		if err != nil {
			continue
		}
		status := map[string]string{}
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok {
				status[k] = strings.TrimSpace(v)
			}
		}
		fn(host, status)
	}
	return nil
}

func waitOnline(t *testing.T, ns, cluster string, want int, timeout time.Duration) map[string]operatorv1alpha1.GlusterNode {
	t.Helper()
	var nodes map[string]operatorv1alpha1.GlusterNode
	err := framework.WaitFor(context.Background(), timeout, func(ctx context.Context) (bool, error) {
		var desc string
		var err error
		if nodes, desc, err = nodeStates(ctx, ns, cluster); err != nil {
			return false, err
		}
		online := 0
		for _, n := range nodes {
			if n.Status.State == "Online" {
				online++
			}
		}
		return len(nodes) == want && online == want, fmt.Errorf("nodes: %s", desc)
	})
	if err != nil {
		dumpNamespace(t, ns)
		t.Fatalf("waiting for %d Online nodes: %v", want, err)
	}
	return nodes
}

// templatesPerZone is one loop-provisioner server per zone.
func templatesPerZone(zones []string, class string) []operatorv1alpha1.NodeTemplate {
	var out []operatorv1alpha1.NodeTemplate
	for _, z := range zones {
		out = append(out, operatorv1alpha1.NodeTemplate{
			Name: z, Zone: z, Nodes: ptr.To[int32](1),
			Storage: operatorv1alpha1.TemplateStorage{
				StorageClassName: ptr.To(class), Capacity: resource.MustParse("1Gi"), DeviceCount: 1,
				Provisioner: objects.ProvisionerLoop,
			},
		})
	}
	return out
}

type testImage struct{ ref, archive string }

// buildTestImages runs hack/build-test-images.sh for one set of images
// (gluster: glusterd2 and etcd; csi: the CSI driver and its sidecars),
// by name; the test skips with its reason when the machine lacks an
// input.
func buildTestImages(t *testing.T, root, set string) map[string]testImage {
	t.Helper()
	cmd := exec.Command(filepath.Join(root, "hack", "build-test-images.sh"), set)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 2 {
		t.Skipf("test images: %s", strings.TrimSpace(stderr.String()))
	}
	if err != nil {
		t.Fatalf("hack/build-test-images.sh: %v\n%s", err, stderr.String())
	}
	images := map[string]testImage{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		if len(f) == 3 {
			images[f[0]] = testImage{ref: f[1], archive: f[2]}
		}
	}
	if len(images) == 0 {
		t.Fatalf("hack/build-test-images.sh %s printed %q", set, out)
	}
	return images
}

func patchNodeLabel(t *testing.T, node, key, value string) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, key, value)
	if _, err := env.Client.CoreV1().Nodes().Patch(context.Background(), node, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// cordonKwokNodes marks every kwok node unschedulable until the test ends.
func cordonKwokNodes(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	list, err := env.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	set := func(name string, v bool) error {
		patch := fmt.Sprintf(`{"spec":{"unschedulable":%t}}`, v)
		_, err := env.Client.CoreV1().Nodes().Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		return err
	}
	for _, n := range list.Items {
		if _, real := n.Labels[framework.RealNodeLabel]; real || n.Spec.Unschedulable {
			continue
		}
		if err := set(n.Name, true); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := set(n.Name, false); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("uncordon %s: %v", n.Name, err)
			}
		})
	}
}

// localVolumes makes a StorageClass of local volumes on the node, the
// default one for the test (etcd's claim names no class), and count
// Filesystem PersistentVolumes of size in directories under dir.
func localVolumes(t *testing.T, nodes []*framework.RealNode, dir string, count int, size string) string {
	t.Helper()
	ctx := context.Background()
	name := "real-node-local"
	sc := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: name, Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
		Provisioner:       "kubernetes.io/no-provisioner",
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
		ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimRetain),
	}
	if _, err := env.Client.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.Client.StorageV1().StorageClasses().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	for k := range count * len(nodes) {
		node, i := nodes[k/count], k%count
		path := filepath.Join(dir, fmt.Sprintf("%s-pv-%d", node.Name, i))
		if err := os.MkdirAll(path, 0o755); err != nil {
			t.Fatal(err)
		}
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", node.Name, i)},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				StorageClassName:              name,
				VolumeMode:                    ptr.To(corev1.PersistentVolumeFilesystem),
				PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: path}},
				NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: objects.HostnameLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{node.Name}}},
				}}}},
			},
		}
		if _, err := env.Client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = env.Client.CoreV1().PersistentVolumes().Delete(context.Background(), pv.Name, metav1.DeleteOptions{})
		})
	}
	return name
}

func waitBricksOnline(t *testing.T, g *gd2.Client, vol string, want int, timeout time.Duration) []gd2.BrickStatus {
	t.Helper()
	var bricks []gd2.BrickStatus
	err := framework.WaitFor(context.Background(), timeout, func(ctx context.Context) (bool, error) {
		var err error
		if bricks, err = g.BricksStatus(ctx, vol); err != nil {
			return false, err
		}
		online := 0
		for _, b := range bricks {
			if b.Online {
				online++
			}
		}
		return online == want && len(bricks) == want, fmt.Errorf("%d of %d bricks online", online, len(bricks))
	})
	if err != nil {
		t.Fatalf("bricks of %s: %v", vol, err)
	}
	return bricks
}

func brickPIDs(bricks []gd2.BrickStatus) string {
	var out []string
	for _, b := range bricks {
		out = append(out, fmt.Sprintf("%s pid %d port %d", b.Info.Path, b.PID, b.Port))
	}
	return strings.Join(out, "; ")
}

func firstKey[V any](m map[string]V) string {
	for k := range m {
		return k
	}
	return ""
}

// startMountPod runs a pod of the GD2 image on the real node that mounts
// the volume with Debian's FUSE client and keeps it mounted; the FUSE
// process lives in the pod.
func startMountPod(t *testing.T, ns, image, source string) string {
	t.Helper()
	vol := source[strings.LastIndex(source, "/")+1:]
	// A failed mount prints the FUSE client's log, which says why.
	script := fmt.Sprintf("set -e; mkdir -p /mnt/%[1]s; mount -t glusterfs %[2]s /mnt/%[1]s || { cat /var/log/glusterfs/*.log; exit 1; }; touch /tmp/mounted; exec sleep infinity", vol, source)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fuse-client"},
		Spec: corev1.PodSpec{
			NodeSelector:                  map[string]string{framework.RealNodeLabel: "true"},
			TerminationGracePeriodSeconds: ptr.To[int64](5),
			Containers: []corev1.Container{{
				Name: "client", Image: image, ImagePullPolicy: corev1.PullNever,
				Command:         []string{"/bin/bash", "-c", script},
				SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)},
				ReadinessProbe:  &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"test", "-f", "/tmp/mounted"}}}, PeriodSeconds: 1},
			}},
		},
	}
	if _, err := env.Client.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.Client.CoreV1().Pods(ns).Delete(context.Background(), pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	})
	return pod.Name
}

// waitMountPID waits for the client pod's mount and returns the pid of a
// process in its mount namespace (its sleep).
func waitMountPID(t *testing.T, nodes map[string]*framework.RealNode, ns, name string) int {
	t.Helper()
	var pid int
	err := framework.WaitFor(context.Background(), 2*time.Minute, func(ctx context.Context) (bool, error) {
		p, err := env.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if !podReady(*p) {
			return false, fmt.Errorf("pod %s: %s", name, podState(*p))
		}
		pid = containerPID(t, nodes[p.Spec.NodeName], *p, "client")
		return pid > 0, nil
	})
	if err != nil {
		var logs []byte
		p, lerr := env.Client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if lerr == nil && nodes[p.Spec.NodeName] != nil {
			logs, lerr = nodes[p.Spec.NodeName].ContainerLog(p, "client")
		}
		t.Fatalf("the FUSE client pod: %v; its log (%v):\n%s", err, lerr, logs)
	}
	return pid
}

// inPod runs a command in the namespaces of the process pid (a pod's), as
// kubectl exec would, and returns its combined output.
func inPod(pid int, args ...string) (string, error) {
	cmd := exec.Command("nsenter", append([]string{"-t", strconv.Itoa(pid), "-m", "-n", "-u", "-i", "-p", "-r", "-w", "--"}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// containerPID is the host pid of a running container's first process.
func containerPID(t *testing.T, node *framework.RealNode, p corev1.Pod, container string) int {
	t.Helper()
	for _, s := range p.Status.ContainerStatuses {
		if s.Name == container && s.ContainerID != "" {
			id := s.ContainerID[strings.Index(s.ContainerID, "://")+3:]
			pid, err := node.ContainerPID(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
	}
	t.Fatalf("pod %s has no running container %s", p.Name, container)
	return 0
}

type writtenFile struct {
	name string
	size int
	sum  [32]byte
}

func writeFiles(t *testing.T, dir string, n, size int) []writtenFile {
	t.Helper()
	var out []writtenFile
	for i := range n {
		b := make([]byte, size+i*4096)
		_, _ = rand.Read(b)
		name := "f-" + strconv.Itoa(i)
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		out = append(out, writtenFile{name: name, size: len(b), sum: sha256.Sum256(b)})
	}
	return out
}

func totalBytes(files []writtenFile) int {
	n := 0
	for _, f := range files {
		n += f.size
	}
	return n
}

func readBack(t *testing.T, dir string, files []writtenFile) {
	t.Helper()
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f.name))
		if err != nil {
			t.Fatal(err)
		}
		if sha256.Sum256(b) != f.sum {
			t.Fatalf("%s: %d bytes read back differ from the %d written", f.name, len(b), f.size)
		}
	}
}
