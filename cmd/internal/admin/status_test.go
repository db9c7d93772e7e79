package admin

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	anthillfake "github.com/gluster/anthill/kube/client/clientset/versioned/fake"
)

func record(at time.Duration, machine, subject, from, to, event, reason, msg string) operatorv1alpha1.TransitionRecord {
	return operatorv1alpha1.TransitionRecord{
		Time: metav1.NewTime(t0.Add(at)), Machine: machine, Subject: subject,
		From: from, To: to, Event: event, Reason: reason, Message: msg,
	}
}

// statusFixture is a degraded cluster mid-upgrade with two nodes, one
// volume healing and a few transitions in each history.
func statusFixture() (*operatorv1alpha1.GlusterCluster, []operatorv1alpha1.GlusterNode) {
	c := glusterCluster("ns", "gluster", "zone-1", "zone-2")
	c.Spec.Mode = operatorv1alpha1.ClusterModeManual
	c.Spec.Gluster = &operatorv1alpha1.GlusterServerSpec{Image: "img", Version: "4.2.0"}
	total, free := resource.MustParse("200Gi"), resource.MustParse("150Gi")
	c.Status = operatorv1alpha1.GlusterClusterStatus{
		Phase: "Upgrading",
		Conditions: []metav1.Condition{
			{Type: "Ready", Status: metav1.ConditionFalse, Reason: "NodesOffline", Message: "1 of 2 nodes online"},
			{Type: "Progressing", Status: metav1.ConditionTrue, Reason: "Upgrading"},
		},
		Nodes:   operatorv1alpha1.NodeCounts{Desired: 2, Total: 2, Online: 1},
		Volumes: []operatorv1alpha1.VolumeStatus{{Name: "vol1", State: "Healing", PendingEntries: 12, Message: "healing 12 entries"}, {Name: "vol2", State: "Healthy"}},
		Capacity: &operatorv1alpha1.CapacityStatus{Total: &total, Free: &free, Zones: []operatorv1alpha1.ZoneCapacityStatus{
			{Zone: "zone-1", Total: resource.MustParse("100Gi"), Free: resource.MustParse("90Gi")},
			{Zone: "zone-2", Total: resource.MustParse("100Gi"), Free: resource.MustParse("60Gi")},
		}},
		Upgrade: &operatorv1alpha1.UpgradeStatus{
			State: "RollingServers", FromVersion: "4.1.0", ToVersion: "4.2.0", CurrentNodes: []string{"gluster-zone-2-0"}, Message: "waiting for heal",
			History: []operatorv1alpha1.TransitionRecord{record(3*time.Second, "upgrade", "", "Validating", "RollingServers", "validated", "Validated", "")},
		},
		History: []operatorv1alpha1.TransitionRecord{
			record(0, "cluster", "", "Provisioning", "Ready", "provisioned", "AllOnline", ""),
			record(2*time.Second, "cluster", "", "Ready", "Upgrading", "upgrade", "VersionChanged", "4.1.0 -> 4.2.0"),
		},
	}
	n1 := *glusterNode("ns", "gluster-zone-1-0", "gluster")
	n1.Status = operatorv1alpha1.GlusterNodeStatus{State: "Online", PeerID: "p-1", Version: "4.2.0", History: []operatorv1alpha1.TransitionRecord{
		record(time.Second, "node", "", "Joining", "Online", "joined", "PeerAlive", ""),
	}, GD2Version: &operatorv1alpha1.GD2VersionStatus{Reported: "v4.2.0-0"}, Conditions: []metav1.Condition{
		{Type: operatorv1alpha1.ConditionVersionMatches, Status: metav1.ConditionTrue, Reason: "VersionMatches"},
	}}
	n2 := *glusterNode("ns", "gluster-zone-2-0", "gluster")
	n2.Spec.Zone = "zone-2"
	n2.Status = operatorv1alpha1.GlusterNodeStatus{State: "Restarting", PeerID: "p-2", Version: "4.1.0", Message: "pod restarting at 4.2.0", History: []operatorv1alpha1.TransitionRecord{
		record(4*time.Second, "node", "", "Quiescing", "Restarting", "quiesced", "Quiesced", "bricks stopped"),
	}, GD2Version: &operatorv1alpha1.GD2VersionStatus{Reported: "v6.0-sim"}, Conditions: []metav1.Condition{
		{Type: operatorv1alpha1.ConditionVersionMatches, Status: metav1.ConditionFalse, Reason: "VersionMismatch", Message: "GD2 reports v6.0-sim."},
	}}
	// Deliberately out of name order: the table sorts.
	return c, []operatorv1alpha1.GlusterNode{n2, n1}
}

func TestWriteStatus(t *testing.T) {
	c, nodes := statusFixture()
	var out bytes.Buffer
	if err := writeStatus(&out, c, nodes, 4, false); err != nil {
		t.Fatal(err)
	}
	want := `GlusterCluster ns/gluster
Phase:    Upgrading
Mode:     manual
Version:  4.2.0
Capacity: 150Gi free of 200Gi
  zone zone-1: 90Gi free of 100Gi
  zone zone-2: 60Gi free of 100Gi

Conditions:
  TYPE         STATUS  REASON        MESSAGE
  Ready        False   NodesOffline  1 of 2 nodes online
  Progressing  True    Upgrading

Nodes: 1 online, 2 total, 2 desired
  NAME              ZONE    STATE       PEER  GD2 VERSION           MESSAGE
  gluster-zone-1-0  zone-1  Online      p-1   v4.2.0-0
  gluster-zone-2-0  zone-2  Restarting  p-2   v6.0-sim (not 4.1.0)  pod restarting at 4.2.0
  VersionMismatch on 1 of 2: gluster-zone-2-0. GD2 reports v6.0-sim.

Volumes:
  NAME  STATE    PENDING  SPLIT-BRAIN  MESSAGE
  vol1  Healing  12       0            healing 12 entries
  vol2  Healthy  0        0

StorageClasses:
  NAME          PARAMETERS                                   RECLAIM  BINDING    DEFAULT
  gluster-file  (driver defaults: replicas=3 brickType=lvm)  Delete   Immediate  -

Upgrade:  RollingServers 4.1.0 -> 4.2.0, upgrading gluster-zone-2-0: waiting for heal

Recent transitions:
  2031-05-06T07:08:10Z  GlusterNode/gluster-zone-1-0  Joining -> Online  (joined)  PeerAlive
  2031-05-06T07:08:11Z  GlusterCluster/gluster  Ready -> Upgrading  (upgrade)  VersionChanged: 4.1.0 -> 4.2.0
  2031-05-06T07:08:12Z  GlusterCluster/gluster  upgrade: Validating -> RollingServers  (validated)  Validated
  2031-05-06T07:08:13Z  GlusterNode/gluster-zone-2-0  Quiescing -> Restarting  (quiesced)  Quiesced: bricks stopped
`
	if out.String() != want {
		t.Errorf("output\n%s\nwant\n%s", out.String(), want)
	}
}

func TestWriteStatusOfAnAutomaticClusterSaysWhatTheAutoscalerDecided(t *testing.T) {
	c := glusterCluster("ns", "auto", "zone-1", "zone-2")
	c.Spec.Mode = operatorv1alpha1.ClusterModeAutomatic
	free1, free2 := resource.MustParse("30Gi"), resource.MustParse("30Gi")
	last := metav1.NewTime(t0)
	c.Status.Autoscaling = &operatorv1alpha1.AutoscalingStatus{
		Reason: "CooldownActive", Message: "Template zone-1 would grow, but the cooldown holds it.", LastScaleTime: &last,
		Templates: []operatorv1alpha1.TemplateAutoscalingStatus{
			{Name: "zone-1", Desired: 2, Free: &free1, Reason: "CooldownActive", Message: "Free 30Gi is below freeStorageMin 40Gi; held by the cooldown."},
			{Name: "zone-2", Desired: 2, Free: &free2, Reason: "AtMaxNodes", Message: "Free 30Gi is below freeStorageMin 40Gi, but the template is at maxNodes (2)."},
			{Name: "zone-3", Desired: 1},
		},
	}
	var out bytes.Buffer
	if err := writeStatus(&out, c, nil, 0, false); err != nil {
		t.Fatal(err)
	}
	want := `Autoscaling: CooldownActive: Template zone-1 would grow, but the cooldown holds it.
  last step: 2031-05-06T07:08:09Z
  template zone-1: 2 desired, 30Gi free, CooldownActive: Free 30Gi is below freeStorageMin 40Gi; held by the cooldown.
  template zone-2: 2 desired, 30Gi free, AtMaxNodes: Free 30Gi is below freeStorageMin 40Gi, but the template is at maxNodes (2).
  template zone-3: 1 desired, ? free, -
`
	if !strings.Contains(out.String(), want) {
		t.Errorf("output\n%s\nwant it to contain\n%s", out.String(), want)
	}
}

func TestWriteStatusOfAFreshCluster(t *testing.T) {
	var out bytes.Buffer
	if err := writeStatus(&out, glusterCluster("ns", "new"), nil, 10, false); err != nil {
		t.Fatal(err)
	}
	want := `GlusterCluster ns/new
Phase:    (not yet reported)
Mode:     manual

Conditions:
  (none)

Nodes: 0 online, 0 total, 0 desired
  (none)

Volumes:
  (none)

StorageClasses:
  NAME      PARAMETERS                                   RECLAIM  BINDING    DEFAULT
  new-file  (driver defaults: replicas=3 brickType=lvm)  Delete   Immediate  -

Recent transitions:
  (none)
`
	if out.String() != want {
		t.Errorf("output\n%s\nwant\n%s", out.String(), want)
	}
}

func TestWriteStatusListsTheClassPerVolumeType(t *testing.T) {
	c := glusterCluster("ns", "gluster", "zone-1", "zone-2", "zone-3")
	c.Spec.CSI = &operatorv1alpha1.CSISpec{StorageClasses: &operatorv1alpha1.CSIStorageClasses{
		File: &operatorv1alpha1.StorageClassSpec{Create: ptr.To(false)},
		Additional: []operatorv1alpha1.StorageClassSpec{
			{Name: "gluster-replica3", Replicas: ptr.To[int32](3), IsDefault: true},
			{Name: "gluster-thin-arbiter", Replicas: ptr.To[int32](2), ArbiterType: "thin", ArbiterPath: "ta.example.com:/bricks/ta", ReclaimPolicy: corev1.PersistentVolumeReclaimRetain},
			{Name: "gluster-loop", BrickType: "loop", AllowedZones: []string{"zone-3"}},
		},
	}}
	var out bytes.Buffer
	if err := writeStatus(&out, c, nil, 0, false); err != nil {
		t.Fatal(err)
	}
	want := `StorageClasses:
  NAME                  PARAMETERS                                                         RECLAIM  BINDING               DEFAULT
  gluster-replica3      replicas=3                                                         Delete   Immediate             yes
  gluster-thin-arbiter  replicas=2 arbiterType=thin arbiterPath=ta.example.com:/bricks/ta  Retain   Immediate             -
  gluster-loop          brickType=loop                                                     Delete   WaitForFirstConsumer  -
`
	if !strings.Contains(out.String(), want) {
		t.Errorf("output\n%s\nwant it to contain\n%s", out.String(), want)
	}
}

func TestPrintStatusReadsTheClusterAndOnlyItsNodes(t *testing.T) {
	c, nodes := statusFixture()
	ac := anthillfake.NewSimpleClientset(c, &nodes[0], &nodes[1], glusterNode("ns", "other-zone-1-0", "other"))
	var out bytes.Buffer
	if err := printStatus(context.Background(), ac, "ns", "gluster", 0, "", &out); err != nil {
		t.Fatalf("printStatus: %v", err)
	}
	if !strings.Contains(out.String(), "Phase:    Upgrading\n") || !strings.Contains(out.String(), "gluster-zone-2-0  zone-2  Restarting") {
		t.Errorf("output lacks the phase or a node:\n%s", out.String())
	}
	if strings.Contains(out.String(), "other-zone-1-0") {
		t.Errorf("output lists another cluster's node:\n%s", out.String())
	}
	if strings.Contains(out.String(), "Recent transitions") {
		t.Errorf("--history 0 should print no transitions:\n%s", out.String())
	}

	err := printStatus(context.Background(), ac, "ns", "nope", 0, "", &out)
	if err == nil || !strings.Contains(err.Error(), `GlusterCluster "nope" not found in namespace ns`) {
		t.Errorf("printStatus(nope) = %v, want a not-found error naming cluster and namespace", err)
	}
}

func TestWriteStatusOfAPausedClusterNamesWhatWaits(t *testing.T) {
	c := glusterCluster("ns", "gluster")
	c.Spec.Paused = true
	draining := *glusterNode("ns", "gluster-zone-1-1", "gluster")
	draining.Status = operatorv1alpha1.GlusterNodeStatus{State: "Draining", Conditions: []metav1.Condition{
		{Type: "Progressing", Status: metav1.ConditionTrue, Reason: "Paused"},
	}}
	online := *glusterNode("ns", "gluster-zone-1-0", "gluster")
	online.Status = operatorv1alpha1.GlusterNodeStatus{State: "Online", Conditions: []metav1.Condition{
		{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Steady"},
	}}
	var out bytes.Buffer
	if err := writeStatus(&out, c, []operatorv1alpha1.GlusterNode{online, draining}, 0, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Paused:   yes; until spec.paused is cleared: no scaling, no drain or brick move",
		"no failure handling, no node stopped for upgrade, no cluster option set, no teardown",
		"Held:     gluster-zone-1-1 (Draining)\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestWriteStatusShowsTheLedger(t *testing.T) {
	c := glusterCluster("ns", "gluster")
	at := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	c.Status.Ledger = []operatorv1alpha1.LedgerEntry{
		{Time: at, Action: "replaceBrick", Node: "gluster-zone-1-0", Peer: "p1", Volume: "vol2", Brick: "/bricks/vol2/b1",
			TargetPeers: []string{"p4", "p5"}, State: "Draining", Reason: "DecommissionRequested"},
		{Time: at, Action: "replaceBrick", Node: "gluster-zone-1-0", Peer: "p1", Volume: "vol2", Brick: "/bricks/vol2/b2"},
		{Time: at, Action: "deletePeer", Node: "gluster-zone-1-0", Peer: "p1", State: "Removing", Reason: "BricksMoved", Cause: "DecommissionRequested"},
		{Time: at, Action: "rollWorkload", Node: "gluster-zone-2-0", Peer: "p2", Version: "v2", State: "Upgrading", Reason: "UpgradeSelected"},
		{Time: at, Action: "createNodes", Template: "zone-3", Count: 2, State: "Scaling", Reason: "Scaling"},
		{Time: at, Action: "decommissionNode", Node: "gluster-zone-3-1", Peer: "p9", Template: "zone-3", State: "Online", Reason: "ScalingDown"},
		{Time: at, Action: "ensureCSIDrivers", Objects: []string{"CSIDriver org.gluster.glusterfs", "DaemonSet gluster-csi-file-nodeplugin"}, State: "Provisioning", Reason: "CreatingCSIDrivers"},
		{Time: at, Action: "setClusterOptions", Options: []string{"cluster.brick-multiplex=on"}, State: "Ready", Reason: "ApplyingOptions"},
		{Time: at, Action: "rollCSIDrivers", Version: "4.2.0", State: "RollingClients", Reason: "RollingClients"},
	}
	var out strings.Builder
	if err := writeStatus(&out, c, nil, 10, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Ledger (brick moves and other lasting changes, oldest first):\n",
		"  2026-01-02T03:04:05Z  deletePeer  gluster-zone-1-0 (peer p1)  Removing  BricksMoved (drain: DecommissionRequested)\n",
		"  2026-01-02T03:04:05Z  rollWorkload  gluster-zone-2-0 at v2 (peer p2)  Upgrading  UpgradeSelected\n",
		"  2026-01-02T03:04:05Z  replaceBrick  vol2:/bricks/vol2/b1  off gluster-zone-1-0 (peer p1) -> one of p4,p5  Draining  DecommissionRequested\n",
		"  2026-01-02T03:04:05Z  replaceBrick  vol2:/bricks/vol2/b2  off gluster-zone-1-0 (peer p1)\n",
		"  2026-01-02T03:04:05Z  createNodes  2 from template zone-3  Scaling  Scaling\n",
		"  2026-01-02T03:04:05Z  decommissionNode  gluster-zone-3-1 of template zone-3 (peer p9)  Online  ScalingDown\n",
		"  2026-01-02T03:04:05Z  ensureCSIDrivers  CSIDriver org.gluster.glusterfs, DaemonSet gluster-csi-file-nodeplugin  Provisioning  CreatingCSIDrivers\n",
		"  2026-01-02T03:04:05Z  setClusterOptions  cluster.brick-multiplex=on  Ready  ApplyingOptions\n",
		"  2026-01-02T03:04:05Z  rollCSIDrivers  CSI clients at 4.2.0  RollingClients  RollingClients\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("status lacks %q:\n%s", want, out.String())
		}
	}
}

func TestCapacityReadsInOneUnitOnBothSides(t *testing.T) {
	c := glusterCluster("ns", "gluster")
	total, free := resource.MustParse("600Gi"), *resource.NewQuantity(547125149184, resource.BinarySI)
	zoneFree := *resource.NewQuantity(182375049728, resource.DecimalSI)
	c.Status.Capacity = &operatorv1alpha1.CapacityStatus{Total: &total, Free: &free, Zones: []operatorv1alpha1.ZoneCapacityStatus{
		{Zone: "zone-1", Total: resource.MustParse("200Gi"), Free: zoneFree},
	}}
	var b bytes.Buffer
	if err := writeStatus(&b, c, nil, 0, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Capacity: 509.6Gi free of 600Gi\n", "  zone zone-1: 169.9Gi free of 200Gi\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("status lacks %q:\n%s", want, b.String())
		}
	}
	for q, want := range map[string]string{"0": "0", "1023": "1023", "1536": "1.5Ki", "1Ti": "1Ti", "100G": "93.1Gi", "-2Mi": "-2Mi"} {
		v := resource.MustParse(q)
		if got := humanBytes(&v); got != want {
			t.Errorf("humanBytes(%s) = %s, want %s", q, got, want)
		}
	}
	if humanBytes(nil) != "?" {
		t.Error("an unknown quantity is ?")
	}
}

func TestStatusPrintsNamesAndJSONPathAsKubectlWould(t *testing.T) {
	c, nodes := statusFixture()
	ac := anthillfake.NewSimpleClientset(c, &nodes[0], &nodes[1])
	for format, want := range map[string]string{
		"name": "glustercluster.operator.gluster.org/gluster\nglusternode.operator.gluster.org/gluster-zone-1-0\nglusternode.operator.gluster.org/gluster-zone-2-0\n",
		`jsonpath={.items[0].status.phase} {range .items[1:]}{.metadata.name}={.status.state} {end}`: "Upgrading gluster-zone-1-0=Online gluster-zone-2-0=Restarting ",
	} {
		var b bytes.Buffer
		if err := printStatus(context.Background(), ac, "ns", "gluster", 0, format, &b); err != nil {
			t.Fatalf("-o %s: %v", format, err)
		}
		if b.String() != want {
			t.Errorf("-o %s:\n%q\nwant\n%q", format, b.String(), want)
		}
	}
}

func TestWriteStatusSaysWhereSnapshotsStand(t *testing.T) {
	c := glusterCluster("ns", "gluster", "zone-1")
	c.Spec.CSI = &operatorv1alpha1.CSISpec{Snapshots: &operatorv1alpha1.CSISnapshots{Enabled: true, DeletionPolicy: "Retain"}}
	c.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "SnapshotAPIMissing",
		Message: "Kubernetes does not serve snapshot.storage.k8s.io/v1 volumesnapshotclasses"}}
	var out bytes.Buffer
	if err := writeStatus(&out, c, nil, 0, false); err != nil {
		t.Fatal(err)
	}
	want := `
Snapshots: VolumeSnapshotClass gluster-file (driver org.gluster.glusterfs, deletionPolicy Retain)
  not created yet: Kubernetes does not serve snapshot.storage.k8s.io/v1 volumesnapshotclasses
`
	if !strings.Contains(out.String(), want) {
		t.Errorf("output\n%s\nwant it to contain\n%s", out.String(), want)
	}
	c.Spec.CSI.Snapshots.Enabled = false
	out.Reset()
	if err := writeStatus(&out, c, nil, 0, false); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "Snapshots:") {
		t.Errorf("a cluster without snapshots lists them:\n%s", out.String())
	}
}
