//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
)

// The GD2-era CSI file driver on real nodes: the cluster of
// TestGlusterPodsOnARealNode, with its CSI pods run from images built
// here (hack/build-test-images.sh csi: the 2019 driver over Debian's
// glusterfs-client, csi-provisioner and node-driver-registrar built from
// source at the versions anthill pins). A claim of a loop-brick class the
// cluster keeps is provisioned by the real provisioner sidecar and driver
// (a GD2 smart volume), a pod on a real node mounts it (the node plugin's
// FUSE client) and writes; the bytes read back, from the pod and from each
// brick. Then the GD2 pod the PersistentVolume names as its server is
// decommissioned, and the data must still be there and a new pod must
// mount the claim.
func TestCSIVolumeOnARealNode(t *testing.T) {
	onRealGluster(t, "installs anthill cluster-wide and runs kubelets; the GlusterCluster's GD2, etcd and CSI pods run on them")
	ctx := context.Background()
	csiImages := buildTestImages(t, framework.RepoRoot(), "csi")
	const class = "real-loop"
	rc := startRealCluster(t, realClusterOptions{
		// Short: the driver mounts from a GD2 pod's DNS name
		// (<node>-0.<cluster>-nodes.<ns>.svc), and Gluster's mount helper
		// drops a server name of 64 characters or more.
		name:   "c",
		images: csiImages,
		operatorArgs: []string{
			"--glusterfs-csi-driver-image=" + csiImages["glusterfs-csi-driver"].ref,
			"--csi-provisioner-image=" + csiImages["csi-provisioner"].ref,
			"--csi-node-driver-registrar-image=" + csiImages["csi-node-driver-registrar"].ref,
		},
		csi: &operatorv1alpha1.CSISpec{
			NodeSelector: map[string]string{framework.RealNodeLabel: "true"},
			StorageClasses: &operatorv1alpha1.CSIStorageClasses{Additional: []operatorv1alpha1.StorageClassSpec{
				{Name: class, BrickType: objects.ProvisionerLoop},
			}},
		},
	})
	ns, step := rc.ns, rc.step
	step("CSI images: %s, %s, %s", csiImages["glusterfs-csi-driver"].ref, csiImages["csi-provisioner"].ref, csiImages["csi-node-driver-registrar"].ref)
	waitCSIPods(t, rc)
	step("CSI controller (driver + csi-provisioner) and 3 node plugins (driver + node-driver-registrar) Ready; every kubelet lists %s in its CSINode", objects.CSIFileDriverName)

	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: ptr.To(class),
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("512Mi")}},
		},
	}
	if _, err := env.Client.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The claim and its volume go before the cluster (cleanups run last
	// first): a cluster's deletion waits while a volume of the driver
	// exists.
	t.Cleanup(func() { deleteClaim(t, rc, pvc.Name) })
	start := time.Now()
	pv := waitClaimBound(t, rc, pvc.Name, 3*time.Minute)
	vol, server := pv.Spec.CSI.VolumeHandle, pv.Spec.CSI.VolumeAttributes["glusterserver"]
	bricks := waitBricksOnline(t, rc.g, vol, 3, time.Minute)
	step("claim bound in %.1fs: PV %s, GD2 volume %s (3 loop bricks online: %s), glusterserver %s", time.Since(start).Seconds(), pv.Name, vol, brickPIDs(bricks), server)
	if len(server) >= 64 {
		t.Fatalf("the PV's glusterserver %q has %d characters: Gluster's mount helper refuses it", server, len(server))
	}
	// The class's mount options, copied by the provisioner: the
	// management Service as a backup volfile server.
	if want := objects.StorageClassMountOptions(rc.c); !slices.Equal(pv.Spec.MountOptions, want) {
		t.Errorf("PV %s mount options %v, want the class's %v", pv.Name, pv.Spec.MountOptions, want)
	}

	nodeNames := sortedKeys(rc.realNodes)
	writer := startClaimPod(t, rc, "writer", nodeNames[0], pvc.Name)
	pid := waitClaimPod(t, rc, writer)
	fuse := claimMount(t, pid)
	step("pod %s on %s mounts the claim at /data: %s", writer, nodeNames[0], fuse)
	mnt := framework.ProcessPath(pid, "data")
	marker := checkMarker(t, mnt, writer)
	written := writeFiles(t, mnt, 24, 256<<10)
	step("the pod wrote its marker (%d bytes); through its mount the test wrote %d files, %d bytes", len(marker), len(written), totalBytes(written))
	readBack(t, mnt, written)
	bricksHold(t, rc.realNodes, ns, rc.name, bricks, written)
	step("read every byte back through the pod's mount; each of the 3 bricks holds every file, bytes equal")

	// The GD2 pod the volume names as its server: <pod>.<service>.<ns>.svc.
	victim := strings.TrimSuffix(strings.SplitN(server, ".", 2)[0], "-0")
	if _, ok := rc.nodes[victim]; !ok {
		t.Fatalf("glusterserver %s names no GD2 pod of the cluster (nodes %v)", server, sortedKeys(rc.nodes))
	}
	if _, err := lookupInCluster(rc.realNodes[nodeNames[1]], server); err != nil {
		t.Fatalf("glusterserver %s does not resolve while its pod runs: %v", server, err)
	}
	g := realGD2(t, ns, rc.name, rc.secret, objects.NodePodName(victim))
	decommissionNode(t, rc.realNodes, ns, rc.name, vol, victim, 1, rc.secret, mnt, written, step)
	checkMarkerAgain(t, mnt, marker)
	// The name the PV mounts from is gone with its pod: the mount below
	// fetches the volume file through the backup volfile server.
	if addrs, err := lookupInCluster(rc.realNodes[nodeNames[1]], server); err == nil {
		t.Errorf("glusterserver %s still resolves, to %v, after its pod was decommissioned", server, addrs)
	}
	mgmt, err := lookupInCluster(rc.realNodes[nodeNames[1]], objects.ManagementHost(rc.c))
	if err != nil {
		t.Fatalf("the management Service %s does not resolve: %v", objects.ManagementHost(rc.c), err)
	}
	step("the PV's glusterserver %s resolves no more; the backup volfile server %s does (%v)", server, objects.ManagementHost(rc.c), mgmt)

	reader := startClaimPod(t, rc, "reader", nodeNames[1], pvc.Name)
	rpid := waitClaimPod(t, rc, reader)
	step("a new pod %s on %s mounts the claim after its glusterserver's pod is gone: %s", reader, nodeNames[1], claimMount(t, rpid))
	rmnt := framework.ProcessPath(rpid, "data")
	readBack(t, rmnt, written)
	checkMarkerAgain(t, rmnt, marker)
	step("the new pod reads every byte back, the first pod's marker included")

	deleteClaim(t, rc, pvc.Name)
	if _, err := g.GetVolume(ctx, vol); !errors.Is(err, gd2.ErrNotFound) {
		t.Errorf("GD2 volume %s after its claim and PV were deleted: %v, want not found", vol, err)
	}
	step("claim deleted: the provisioner deleted the PV and the driver the GD2 volume %s", vol)
}

// waitCSIPods waits until the cluster's CSI controller and a node plugin
// on each real node are Ready, and each real node's CSINode lists the
// driver (node-driver-registrar registered it with the kubelet).
func waitCSIPods(t *testing.T, rc *realCluster) {
	t.Helper()
	err := framework.WaitFor(context.Background(), 4*time.Minute, func(ctx context.Context) (bool, error) {
		pods, err := env.Client.CoreV1().Pods(rc.ns).List(ctx, metav1.ListOptions{LabelSelector: objects.LabelCluster + "=" + rc.name})
		if err != nil {
			return false, err
		}
		controllers, plugins := 0, map[string]bool{}
		var states []string
		for _, p := range pods.Items {
			comp := p.Labels[objects.LabelComponent]
			if comp != objects.ComponentCSIController && comp != objects.ComponentCSINode {
				continue
			}
			states = append(states, p.Name+"="+podState(p))
			if !podReady(p) {
				continue
			}
			if comp == objects.ComponentCSIController {
				controllers++
			} else {
				plugins[p.Spec.NodeName] = true
			}
		}
		for n := range rc.realNodes {
			cn, err := env.Client.StorageV1().CSINodes().Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				return false, fmt.Errorf("CSINode %s: %v; pods %v", n, err, states)
			}
			found := false
			for _, d := range cn.Spec.Drivers {
				found = found || d.Name == objects.CSIFileDriverName
			}
			if !found || !plugins[n] {
				return false, fmt.Errorf("node %s: plugin ready %t, driver registered %t; pods %v", n, plugins[n], found, states)
			}
		}
		return controllers == 1, fmt.Errorf("%d controllers ready; pods %v", controllers, states)
	})
	if err != nil {
		csiLogs(t, rc)
		dumpNamespace(t, rc.ns)
		t.Fatalf("CSI pods: %v", err)
	}
}

// waitClaimBound waits until the claim is Bound and returns its volume,
// which must be the driver's.
func waitClaimBound(t *testing.T, rc *realCluster, name string, timeout time.Duration) *corev1.PersistentVolume {
	t.Helper()
	var pv *corev1.PersistentVolume
	err := framework.WaitFor(context.Background(), timeout, func(ctx context.Context) (bool, error) {
		c, err := env.Client.CoreV1().PersistentVolumeClaims(rc.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if c.Status.Phase != corev1.ClaimBound {
			return false, fmt.Errorf("claim %s is %s", name, c.Status.Phase)
		}
		pv, err = env.Client.CoreV1().PersistentVolumes().Get(ctx, c.Spec.VolumeName, metav1.GetOptions{})
		return err == nil, err
	})
	if err != nil {
		csiLogs(t, rc)
		dumpNamespace(t, rc.ns)
		t.Fatalf("claim %s: %v", name, err)
	}
	if pv.Spec.CSI == nil || pv.Spec.CSI.Driver != objects.CSIFileDriverName || pv.Spec.CSI.VolumeAttributes["glustervol"] != pv.Spec.CSI.VolumeHandle {
		t.Fatalf("PV %s is not a volume of %s with its GD2 volume in glustervol: %+v", pv.Name, objects.CSIFileDriverName, pv.Spec.PersistentVolumeSource)
	}
	return pv
}

// deleteClaim deletes the claim and its pods and waits until its
// PersistentVolume is gone: the provisioner deleted it once the driver
// deleted the GD2 volume.
func deleteClaim(t *testing.T, rc *realCluster, name string) {
	t.Helper()
	ctx := context.Background()
	c, err := env.Client.CoreV1().PersistentVolumeClaims(rc.ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return
	}
	if err != nil {
		t.Error(err)
		return
	}
	for _, p := range []string{"writer", "reader"} {
		_ = env.Client.CoreV1().Pods(rc.ns).Delete(ctx, p, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	}
	if err := env.Client.CoreV1().PersistentVolumeClaims(rc.ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Error(err)
		return
	}
	err = framework.WaitFor(ctx, 3*time.Minute, func(ctx context.Context) (bool, error) {
		if c.Spec.VolumeName == "" {
			_, err := env.Client.CoreV1().PersistentVolumeClaims(rc.ns).Get(ctx, name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), err
		}
		pv, err := env.Client.CoreV1().PersistentVolumes().Get(ctx, c.Spec.VolumeName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		return false, fmt.Errorf("PV %s is %s", pv.Name, pv.Status.Phase)
	})
	if err != nil {
		csiLogs(t, rc)
		t.Errorf("delete claim %s: %v", name, err)
	}
}

// startClaimPod runs a pod on node that mounts the claim at /data, writes
// a marker file naming itself there unless one is there, and sleeps.
func startClaimPod(t *testing.T, rc *realCluster, name, node, claim string) string {
	t.Helper()
	script := "set -e; [ -e /data/marker ] || echo \"written by ${HOSTNAME} through the CSI volume\" > /data/marker; touch /tmp/mounted; exec sleep infinity"
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: rc.ns, Name: name},
		Spec: corev1.PodSpec{
			NodeSelector:                  map[string]string{objects.HostnameLabel: node},
			TerminationGracePeriodSeconds: ptr.To[int64](5),
			Containers: []corev1.Container{{
				Name: "client", Image: rc.images["glusterd2"].ref, ImagePullPolicy: corev1.PullNever,
				Command:        []string{"/bin/bash", "-c", script},
				VolumeMounts:   []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"test", "-f", "/tmp/mounted"}}}, PeriodSeconds: 1},
			}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim},
			}}},
		},
	}
	if _, err := env.Client.CoreV1().Pods(rc.ns).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.Client.CoreV1().Pods(rc.ns).Delete(context.Background(), pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	})
	return pod.Name
}

// waitClaimPod waits until the pod of startClaimPod is Ready (its volume
// mounted, its marker there) and returns the pid of its process; when it
// is not, the test fails with the pod's events and the CSI containers'
// logs.
func waitClaimPod(t *testing.T, rc *realCluster, name string) int {
	t.Helper()
	err := framework.WaitFor(context.Background(), 2*time.Minute, func(ctx context.Context) (bool, error) {
		p, err := env.Client.CoreV1().Pods(rc.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return podReady(*p), fmt.Errorf("pod %s: %s", name, podState(*p))
	})
	if err != nil {
		ev, _ := env.Client.CoreV1().Events(rc.ns).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		for _, e := range ev.Items {
			t.Logf("pod %s event %s %s: %s", name, e.Type, e.Reason, e.Message)
		}
		csiLogs(t, rc)
		t.Fatalf("the pod %s mounting the claim: %v", name, err)
	}
	return waitMountPID(t, rc.realNodes, rc.ns, name)
}

// lookupInCluster resolves host (<...>.svc) as the node's pods do: through
// the cluster DNS the node's kubelet gives them, completed by their search
// list's cluster.local.
func lookupInCluster(node *framework.RealNode, host string) ([]string, error) {
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", net.JoinHostPort(node.HostIP, "53"))
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return r.LookupHost(ctx, host+".cluster.local.")
}

// claimMount is the line of the process's mountinfo for /data, which must
// be a FUSE mount of Gluster.
func claimMount(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) > 4 && f[4] == "/data" {
			if !strings.Contains(l, " - fuse.glusterfs ") {
				t.Fatalf("/data in pid %d is not a Gluster FUSE mount: %s", pid, l)
			}
			_, src, _ := strings.Cut(l, " - ")
			return src
		}
	}
	t.Fatalf("nothing mounted at /data in pid %d", pid)
	return ""
}

// checkMarker reads the marker the pod wrote through its own mount.
func checkMarker(t *testing.T, mnt, pod string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(mnt, "marker"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "written by " + pod + " through the CSI volume\n"; string(b) != want {
		t.Fatalf("marker holds %q, want %q", b, want)
	}
	return b
}

func checkMarkerAgain(t *testing.T, mnt string, want []byte) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(mnt, "marker"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, want) || sha256.Sum256(b) != sha256.Sum256(want) {
		t.Fatalf("marker holds %q, want %q", b, want)
	}
}

// csiLogs logs the last lines of every CSI container of the cluster.
func csiLogs(t *testing.T, rc *realCluster) {
	t.Helper()
	pods, err := env.Client.CoreV1().Pods(rc.ns).List(context.Background(), metav1.ListOptions{LabelSelector: objects.LabelCluster + "=" + rc.name})
	if err != nil {
		t.Log(err)
		return
	}
	for _, p := range pods.Items {
		comp := p.Labels[objects.LabelComponent]
		node := rc.realNodes[p.Spec.NodeName]
		if node == nil || (comp != objects.ComponentCSIController && comp != objects.ComponentCSINode) {
			continue
		}
		for _, c := range p.Spec.Containers {
			b, err := node.ContainerLog(&p, c.Name)
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			if len(lines) > 40 {
				lines = lines[len(lines)-40:]
			}
			t.Logf("%s/%s log (%v):\n%s", p.Name, c.Name, err, strings.Join(lines, "\n"))
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
