package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
	"github.com/gluster/anthill/kube/client/informers/externalversions"
)

// This file tests the operator.gluster.org API as the API server serves it
// from the CRDs in manifests/crds: schema, defaults, CEL rules, the status
// subresource, the generated clientset and informers, and the samples.

const apiTimeout = time.Minute

func operatorClient(t *testing.T) versioned.Interface {
	t.Helper()
	cs, err := versioned.NewForConfig(env.RestConfig)
	if err != nil {
		t.Fatalf("operator clientset: %v", err)
	}
	return cs
}

// validCluster is a manual-mode cluster with one server in each of three
// zones that every rule accepts; the rejection cases each break one thing.
func validCluster(ns, name string) *operatorv1alpha1.GlusterCluster {
	c := &operatorv1alpha1.GlusterCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: operatorv1alpha1.GlusterClusterSpec{
			Mode: operatorv1alpha1.ClusterModeManual,
			Gluster: &operatorv1alpha1.GlusterServerSpec{
				Image:   "registry.invalid/gluster/glusterd2:4.1.0",
				Version: "4.1.0",
			},
			CSI: &operatorv1alpha1.CSISpec{
				FileImage: "registry.invalid/gluster/csi-file:4.1.0",
				Version:   "4.1.0",
			},
		},
	}
	for z := 1; z <= 3; z++ {
		zone := "zone-" + strconv.Itoa(z)
		c.Spec.NodeTemplates = append(c.Spec.NodeTemplates, operatorv1alpha1.NodeTemplate{
			Name:    zone,
			Zone:    zone,
			Nodes:   ptr.To[int32](1),
			Storage: operatorv1alpha1.TemplateStorage{Capacity: resource.MustParse("100Gi")},
		})
	}
	return c
}

// validNode is a server with PVC storage that every rule accepts.
func validNode(ns, name string) *operatorv1alpha1.GlusterNode {
	return &operatorv1alpha1.GlusterNode{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: operatorv1alpha1.GlusterNodeSpec{
			Cluster:  "gluster",
			Zone:     "zone-1",
			Template: "zone-1",
			Storage: &operatorv1alpha1.NodeStorage{
				Capacity:    ptr.To(resource.MustParse("100Gi")),
				DeviceCount: ptr.To[int32](2),
			},
		},
	}
}

func TestAPICRDsEstablished(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	client, err := apiextensionsclient.NewForConfig(env.RestConfig)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		kind      string
		shortName string
	}{
		"glusterclusters.operator.gluster.org": {"GlusterCluster", "gc"},
		"glusternodes.operator.gluster.org":    {"GlusterNode", "gn"},
	}
	for name, w := range want {
		crd, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get CRD %s: %v", name, err)
		}
		established := false
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				established = true
			}
		}
		if !established {
			t.Errorf("CRD %s is not Established: %+v", name, crd.Status.Conditions)
		}
		if crd.Spec.Scope != apiextensionsv1.NamespaceScoped {
			t.Errorf("CRD %s scope = %s, want Namespaced", name, crd.Spec.Scope)
		}
		if crd.Spec.Names.Kind != w.kind || !contains(crd.Spec.Names.ShortNames, w.shortName) || !contains(crd.Spec.Names.Categories, "gluster") {
			t.Errorf("CRD %s names = %+v, want kind %s, short name %s, category gluster", name, crd.Spec.Names, w.kind, w.shortName)
		}
		if len(crd.Spec.Versions) != 2 || crd.Spec.Versions[0].Name != "v1alpha1" || crd.Spec.Versions[1].Name != "v1beta1" || !crd.Spec.Versions[1].Storage {
			t.Fatalf("CRD %s versions = %d, want v1alpha1 and v1beta1 (stored)", name, len(crd.Spec.Versions))
		}
		v := crd.Spec.Versions[0]
		if v.Subresources == nil || v.Subresources.Status == nil {
			t.Errorf("CRD %s has no status subresource", name)
		}
		if len(v.AdditionalPrinterColumns) == 0 {
			t.Errorf("CRD %s has no printer columns", name)
		}
		// Every field must explain itself in kubectl explain.
		var undocumented []string
		for prop, s := range v.Schema.OpenAPIV3Schema.Properties {
			if prop == "metadata" {
				continue // standard object metadata, documented by Kubernetes
			}
			undocumented = append(undocumented, undocumentedFields(prop, s)...)
		}
		if len(undocumented) > 0 {
			sort.Strings(undocumented)
			t.Errorf("CRD %s has fields without a description:\n  %s", name, strings.Join(undocumented, "\n  "))
		}
	}
}

func undocumentedFields(path string, s apiextensionsv1.JSONSchemaProps) []string {
	var out []string
	if s.Description == "" {
		out = append(out, path)
	}
	for name, p := range s.Properties {
		out = append(out, undocumentedFields(path+"."+name, p)...)
	}
	if s.Items != nil && s.Items.Schema != nil {
		for name, p := range s.Items.Schema.Properties {
			out = append(out, undocumentedFields(path+"[]."+name, p)...)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestAPIGlusterClusterRoundTrip(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	ns := env.Namespace(t)
	cs := operatorClient(t).OperatorV1alpha1().GlusterClusters(ns)

	// Every spec field set, so that defaulting changes nothing and the
	// object must come back exactly as sent.
	want := validCluster(ns, "full")
	want.Spec.Mode = operatorv1alpha1.ClusterModeAutomatic
	for i := range want.Spec.NodeTemplates {
		tmpl := &want.Spec.NodeTemplates[i]
		tmpl.Nodes = nil
		tmpl.MinNodes = ptr.To[int32](1)
		tmpl.MaxNodes = ptr.To[int32](4)
		tmpl.MaxStorage = ptr.To(resource.MustParse("10Ti"))
		tmpl.FreeStorageMin = ptr.To(resource.MustParse("500Gi"))
		tmpl.FreeStorageMax = ptr.To(resource.MustParse("2Ti"))
		tmpl.Storage.StorageClassName = ptr.To("fast-block")
		tmpl.Storage.DeviceCount = 2
		tmpl.Tolerations = []corev1.Toleration{{Key: "storage", Operator: "Exists", Effect: "NoSchedule"}}
		tmpl.NodeAffinity = storageNodeAffinity()
	}
	want.Spec.CSI.NodeSelector = map[string]string{"example.com/storage-client": "true", "kubernetes.io/os": "linux"}
	want.Spec.Drivers = []operatorv1alpha1.GlusterDriver{operatorv1alpha1.GlusterDriverFile}
	want.Spec.CSI.StorageClasses = &operatorv1alpha1.CSIStorageClasses{
		File: &operatorv1alpha1.StorageClassSpec{Create: ptr.To(true), Name: "gluster.file", ReclaimPolicy: corev1.PersistentVolumeReclaimRetain, IsDefault: true, AllowedZones: []string{"zone-1", "us-east-1a"}},
	}
	want.Spec.CASecretRef = &operatorv1alpha1.SecretReference{Name: "gluster-ca", Key: "ca.crt"}
	want.Spec.ClusterOptions = map[string]string{"cluster.brick-multiplex": "on"}
	want.Spec.UpgradePolicy = &operatorv1alpha1.UpgradePolicy{MaxParallel: 2, PerZone: true, HealTimeout: &metav1.Duration{Duration: 90 * time.Minute}}
	want.Spec.FailurePolicy = &operatorv1alpha1.FailurePolicy{PermissibleDowntime: &metav1.Duration{Duration: 45 * time.Minute},
		OfflineGrace: &metav1.Duration{Duration: 45 * time.Second}, RecoveryWindow: &metav1.Duration{Duration: 5 * time.Minute}}
	want.Spec.DrainPolicy = &operatorv1alpha1.DrainPolicy{MaxParallelMoves: 3}
	want.Spec.Paused = true
	want.Spec.Automation = &operatorv1alpha1.AutomationSpec{
		DisruptionBudgets: ptr.To(true), TemplateRollouts: ptr.To(false), ClusterOptions: ptr.To(true),
		LostPodEviction: ptr.To(false), MarkFailed: ptr.To(true), ForceStartBricks: ptr.To(false),
	}
	want.Spec.Management = &operatorv1alpha1.ManagementSpec{
		Endpoint:      "https://gd2.gluster.svc:24007",
		AuthSecretRef: &operatorv1alpha1.SecretReference{Name: "gluster-gd2", Key: "secret"},
	}

	created, err := cs.Create(ctx, want, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	got, err := cs.Get(ctx, created.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	assertSameSpec(t, "after create", want.Spec, got.Spec)
	if got.Generation != 1 {
		t.Errorf("generation after create = %d, want 1", got.Generation)
	}

	got.Spec.NodeTemplates[0].MaxNodes = ptr.To[int32](6)
	got.Spec.ClusterOptions["cluster.max-bricks-per-process"] = "250"
	got.Spec.Gluster.Version = "4.2.0"
	updated, err := cs.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	again, err := cs.Get(ctx, updated.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get after update: %v", err)
	}
	assertSameSpec(t, "after update", got.Spec, again.Spec)
	if again.Generation != 2 {
		t.Errorf("generation after a spec update = %d, want 2", again.Generation)
	}
}

// A block StorageClass is refused in every form, create: false included,
// with the field named: v0.2.0 served it, so it stays in the schema, but
// it did nothing (no block driver runs). The file class may now take any
// name, <cluster>-block included.
func TestAPIRefusesABlockStorageClass(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	ns := env.Namespace(t)
	cs := operatorClient(t).OperatorV1alpha1().GlusterClusters(ns)
	for i, block := range []*operatorv1alpha1.StorageClassSpec{
		{},
		{Create: ptr.To(false)},
		{Name: "gluster-block", IsDefault: true},
	} {
		c := validCluster(ns, fmt.Sprintf("block-%d", i))
		c.Spec.CSI.StorageClasses = &operatorv1alpha1.CSIStorageClasses{Block: block}
		_, err := cs.Create(ctx, c, metav1.CreateOptions{})
		expectInvalid(t, c.Name, err, "spec.csi.storageClasses.block: block is not available")
	}
	ok := validCluster(ns, "block-3")
	ok.Spec.CSI.StorageClasses = &operatorv1alpha1.CSIStorageClasses{File: &operatorv1alpha1.StorageClassSpec{Name: "block-3-block"}}
	if _, err := cs.Create(ctx, ok, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a file class named like the old block default was rejected: %v", err)
	}
}

// spec.gluster.version goes back only as far as the servers run: never
// below the version of a finished run (the issue-41 downgrade, which the
// upgrade machine could only block), and, while a run is Validating,
// Blocked or Paused, back to the version it started from (the documented
// cancel) and no further. The servers' version is what status.upgrade
// says: the run's fromVersion when its target is the current spec, else
// the last run's toVersion; before any run validated, nothing is known and
// a stopped run may be set back freely.
func TestAPIGlusterVersionGoesBackOnlyToWhatTheServersRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	ns := env.Namespace(t)
	cs := operatorClient(t).OperatorV1alpha1().GlusterClusters(ns)
	c := validCluster(ns, "versions")
	c.Spec.CSI.Version = "4.0.0"
	c, err := cs.Create(ctx, c, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// setUpgrade writes status.upgrade as the upgrade syncer would.
	setUpgrade := func(state, from, to string) {
		t.Helper()
		c.Status.Upgrade = &operatorv1alpha1.UpgradeStatus{State: state, FromVersion: from, ToVersion: to}
		if c, err = cs.UpdateStatus(ctx, c, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("status.upgrade %s %s -> %s: %v", state, from, to, err)
		}
	}
	// setVersion changes spec.gluster.version; it reports the error and
	// keeps c at what the API server stored.
	setVersion := func(v string) error {
		t.Helper()
		next := c.DeepCopy()
		next.Spec.Gluster.Version = v
		stored, err := cs.Update(ctx, next, metav1.UpdateOptions{})
		if err == nil {
			c = stored
		}
		return err
	}
	accept := func(v, why string) {
		t.Helper()
		if err := setVersion(v); err != nil {
			t.Fatalf("%s: setting %s was refused: %v", why, v, err)
		}
	}
	refuse := func(v, why string) {
		t.Helper()
		expectInvalid(t, why+": "+v, setVersion(v), "spec.gluster.version cannot be lowered")
	}

	refuse("4.0.9", "no run ever: the servers run the spec's version")
	accept("4.1.1", "an upgrade")
	accept("4.1.1", "the same version")

	// Blocked before the run was validated, and no run before it: the
	// servers were never restarted by anthill.
	setUpgrade("Blocked", "", "")
	accept("4.1.0", "cancel a run never validated")
	accept("4.1.1", "upgrade again")

	// Validated, servers between 4.1.0 and 4.1.1: back to the start cancels.
	setUpgrade("Blocked", "4.1.0", "4.1.1")
	refuse("4.0.9", "below the run's start")
	accept("v4.1", "cancel a blocked run back to its start")
	accept("4.1.1", "retry")

	// Finished: every server runs 4.1.1.
	for _, state := range []string{"RollingClients", "Complete", "Idle"} {
		setUpgrade(state, "4.1.0", "4.1.1")
		refuse("4.1.0", state+": every server runs the target")
	}

	// A new target not yet validated: the servers run the last target.
	accept("4.2.0", "the next upgrade")
	setUpgrade("Paused", "4.1.0", "4.1.1")
	refuse("4.1.0", "below the last run's target")
	accept("4.1.1", "cancel a paused run back to what the servers run")
}

// spec.csi.version never goes back on its own: anthill never moves a CSI
// client back, as it never moves a server back. The one way down is
// together with spec.gluster.version when an upgrade is cancelled (whether
// that is allowed is the rule above's to say), and then no lower than the
// new spec.gluster.version, as far as the clients may follow the servers.
func TestAPICSIVersionIsNeverLowered(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	ns := env.Namespace(t)
	cs := operatorClient(t).OperatorV1alpha1().GlusterClusters(ns)
	c := validCluster(ns, "csi-versions")
	c.Spec.CSI.Version = "4.0.0"
	c, err := cs.Create(ctx, c, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// setVersions changes spec.gluster.version and spec.csi.version in one
	// update; it reports the error and keeps c at what the API server
	// stored.
	setVersions := func(gluster, csi string) error {
		t.Helper()
		next := c.DeepCopy()
		next.Spec.Gluster.Version, next.Spec.CSI.Version = gluster, csi
		stored, err := cs.Update(ctx, next, metav1.UpdateOptions{})
		if err == nil {
			c = stored
		}
		return err
	}
	accept := func(gluster, csi, why string) {
		t.Helper()
		if err := setVersions(gluster, csi); err != nil {
			t.Fatalf("%s: gluster %s, csi %s was refused: %v", why, gluster, csi, err)
		}
	}
	refuse := func(gluster, csi, why string) {
		t.Helper()
		expectInvalid(t, fmt.Sprintf("%s: gluster %s, csi %s", why, gluster, csi), setVersions(gluster, csi), "spec.csi.version cannot be lowered")
	}

	refuse("4.1.0", "3.9.9", "lowered alone")
	accept("4.1.0", "4.0.0", "unchanged")
	accept("4.1.0", "v4.1", "raised to the servers' version")
	refuse("4.1.0", "4.0.9", "lowered alone after a raise")
	refuse("4.2.0", "4.0.0", "lowered while the servers go up")

	// An upgrade of servers and clients, stopped before it validated: the
	// servers may go back (the rule above), and the clients with them.
	accept("4.2.0", "4.2.0", "an upgrade of both")
	c.Status.Upgrade = &operatorv1alpha1.UpgradeStatus{State: "Blocked"}
	if c, err = cs.UpdateStatus(ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	refuse("4.1.0", "4.0.0", "cancelled, the clients below the new server version")
	accept("4.1.0", "4.1.0", "cancelled, the clients back with the servers")
	if got := c.Spec.CSI.Version; got != "4.1.0" {
		t.Errorf("spec.csi.version = %q after the cancel, want 4.1.0", got)
	}

	// Unset, there is nothing to compare with (docs/upgrades.md says so).
	accept("4.1.0", "", "unset")
	accept("4.1.0", "4.0.0", "set lower after unset")
}

// A server on one host's block devices, naming that host, is accepted.
func TestAPIAcceptsAHostDeviceNodeNamingItsHost(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	ns := env.Namespace(t)
	n := validNode(ns, "gluster-host-a")
	n.Spec.Storage = &operatorv1alpha1.NodeStorage{Devices: []string{"/dev/sdb", "/dev/sdc"}, Host: "host-a"}
	if _, err := operatorClient(t).OperatorV1alpha1().GlusterNodes(ns).Create(ctx, n, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a pinned host-device node was rejected: %v", err)
	}
}

// A template whose maxStorage is exactly what its minNodes servers have is
// accepted: the cap is reached, not broken.
func TestAPIAcceptsAMaxStorageItsMinimumFillsExactly(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	ns := env.Namespace(t)
	c := validCluster(ns, "full-at-minimum")
	c.Spec.Mode = operatorv1alpha1.ClusterModeAutomatic
	for i := range c.Spec.NodeTemplates {
		tmpl := &c.Spec.NodeTemplates[i]
		tmpl.Nodes, tmpl.MinNodes, tmpl.MaxNodes = nil, ptr.To[int32](3), ptr.To[int32](5)
		tmpl.Storage.DeviceCount = 4
		tmpl.MaxStorage = ptr.To(resource.MustParse("1200Gi")) // 3 servers of 4 x 100Gi
	}
	if _, err := operatorClient(t).OperatorV1alpha1().GlusterClusters(ns).Create(ctx, c, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a maxStorage equal to minNodes x deviceCount x capacity was rejected: %v", err)
	}
}

func TestAPIGlusterNodeRoundTrip(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	ns := env.Namespace(t)
	cs := operatorClient(t).OperatorV1alpha1().GlusterNodes(ns)

	want := validNode(ns, "gluster-zone-1-0")
	want.Spec.DesiredState = operatorv1alpha1.NodeEnabled
	want.Spec.Storage.StorageClassName = ptr.To("fast-block")
	want.Spec.NodeAffinity = storageNodeAffinity()
	want.Spec.Tolerations = []corev1.Toleration{{Key: "storage", Operator: "Exists", Effect: "NoSchedule"}}

	created, err := cs.Create(ctx, want, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	got, err := cs.Get(ctx, created.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	assertSameSpec(t, "after create", want.Spec, got.Spec)

	got.Spec.DesiredState = operatorv1alpha1.NodeDisabled
	got.Spec.Storage.DeviceCount = ptr.To[int32](3)
	if _, err := cs.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update: %v", err)
	}
	again, err := cs.Get(ctx, got.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get after update: %v", err)
	}
	assertSameSpec(t, "after update", got.Spec, again.Spec)

	// An external server: no storage, an address instead.
	ext := validNode(ns, "external-0")
	ext.Spec.Storage = nil
	ext.Spec.ExternalAddress = "gluster-1.storage.example.com"
	if _, err := cs.Create(ctx, ext, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create external node: %v", err)
	}
}

func TestAPIDefaults(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	ns := env.Namespace(t)
	client := operatorClient(t).OperatorV1alpha1()

	minimal := validCluster(ns, "minimal")
	minimal.Spec.Mode = ""
	minimal.Spec.CSI = nil
	c, err := client.GlusterClusters(ns).Create(ctx, minimal, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if c.Spec.Mode != operatorv1alpha1.ClusterModeManual {
		t.Errorf("spec.mode = %q, want manual", c.Spec.Mode)
	}
	if p := c.Spec.FailurePolicy; p == nil || p.PermissibleDowntime == nil || p.PermissibleDowntime.Duration != 30*time.Minute ||
		p.OfflineGrace == nil || p.OfflineGrace.Duration != 30*time.Second || p.RecoveryWindow == nil || p.RecoveryWindow.Duration != 2*time.Minute {
		t.Errorf("spec.failurePolicy = %+v, want permissibleDowntime 30m, offlineGrace 30s, recoveryWindow 2m", p)
	}
	if p := c.Spec.UpgradePolicy; p == nil || p.MaxParallel != 1 || p.HealTimeout == nil || p.HealTimeout.Duration != time.Hour {
		t.Errorf("spec.upgradePolicy = %+v, want maxParallel 1 and healTimeout 1h", p)
	}
	if a := c.Spec.Automation; a == nil || !ptr.Deref(a.DisruptionBudgets, false) || !ptr.Deref(a.TemplateRollouts, false) || !ptr.Deref(a.ClusterOptions, false) ||
		!ptr.Deref(a.LostPodEviction, false) || !ptr.Deref(a.MarkFailed, false) || !ptr.Deref(a.ForceStartBricks, false) {
		t.Errorf("spec.automation = %+v, want every switch true", a)
	}
	for _, tmpl := range c.Spec.NodeTemplates {
		if tmpl.Storage.DeviceCount != 1 {
			t.Errorf("spec.nodeTemplates[%s].storage.deviceCount = %d, want 1", tmpl.Name, tmpl.Storage.DeviceCount)
		}
	}

	auto := validCluster(ns, "automatic")
	auto.Spec.Mode = operatorv1alpha1.ClusterModeAutomatic
	for i := range auto.Spec.NodeTemplates {
		tmpl := &auto.Spec.NodeTemplates[i]
		tmpl.Nodes, tmpl.MinNodes, tmpl.MaxNodes = nil, ptr.To[int32](1), ptr.To[int32](3)
	}
	auto.Spec.Autoscaling = &operatorv1alpha1.AutoscalingSpec{}
	a, err := client.GlusterClusters(ns).Create(ctx, auto, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create automatic: %v", err)
	}
	if p := a.Spec.Autoscaling; p == nil || p.ScaleUp == nil || !*p.ScaleUp || p.ScaleDown == nil || !*p.ScaleDown || p.Cooldown == nil || p.Cooldown.Duration != 10*time.Minute {
		t.Errorf("spec.autoscaling = %+v, want scaleUp and scaleDown true and cooldown 10m", p)
	}

	node := validNode(ns, "n")
	n, err := client.GlusterNodes(ns).Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create node: %v", err)
	}
	if n.Spec.DesiredState != operatorv1alpha1.NodeEnabled {
		t.Errorf("spec.desiredState = %q, want enabled", n.Spec.DesiredState)
	}
}

// TestAPIStatusSubresource checks that status is written only through the
// status subresource, and spec only through the main resource, so that the
// operator and an admin never overwrite each other's half.
func TestAPIStatusSubresource(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	ns := env.Namespace(t)
	client := operatorClient(t).OperatorV1alpha1()
	now := metav1.NewTime(time.Now().Truncate(time.Second))

	t.Run("GlusterCluster", func(t *testing.T) {
		cs := client.GlusterClusters(ns)
		obj := validCluster(ns, "status")
		obj.Status.Phase = "Ready"
		created, err := cs.Create(ctx, obj, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if created.Status.Phase != "" {
			t.Errorf("create stored status.phase %q; status must be ignored on create", created.Status.Phase)
		}

		created.Spec.Paused = true
		created.Status.Phase = "Ready"
		updated, err := cs.Update(ctx, created, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("update: %v", err)
		}
		if !updated.Spec.Paused {
			t.Errorf("update lost the spec change")
		}
		if updated.Status.Phase != "" {
			t.Errorf("update of the main resource stored status.phase %q; it must be ignored", updated.Status.Phase)
		}

		updated.Status = operatorv1alpha1.GlusterClusterStatus{
			ObservedGeneration: updated.Generation,
			Phase:              "Ready",
			Conditions: []metav1.Condition{{
				Type: operatorv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: "AllNodesOnline",
				Message: "3 of 3 nodes online", LastTransitionTime: now, ObservedGeneration: updated.Generation,
			}},
			Nodes:    operatorv1alpha1.NodeCounts{Desired: 3, Total: 3, Online: 3},
			Volumes:  []operatorv1alpha1.VolumeStatus{{Name: "pv-1", State: "Healthy", LastTransitionTime: &now}},
			Upgrade:  &operatorv1alpha1.UpgradeStatus{State: "Idle", FromVersion: "4.1.0", ToVersion: "4.1.0"},
			Capacity: &operatorv1alpha1.CapacityStatus{Total: ptr.To(resource.MustParse("300Gi")), Free: ptr.To(resource.MustParse("250Gi"))},
			History:  history(3, now),
		}
		updated.Spec.Paused = false
		written, err := cs.UpdateStatus(ctx, updated, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("update status: %v", err)
		}
		got, err := cs.Get(ctx, written.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		if !apiequality.Semantic.DeepEqual(got.Status, updated.Status) {
			t.Errorf("status after UpdateStatus:\n got %s\nwant %s", toJSON(got.Status), toJSON(updated.Status))
		}
		if !got.Spec.Paused {
			t.Errorf("UpdateStatus changed spec.paused; spec must be ignored on the status subresource")
		}
		if got.Generation != 2 {
			t.Errorf("generation = %d, want 2: one spec update, status updates do not count", got.Generation)
		}

		got.Status.History = history(operatorv1alpha1.MaxHistory+1, now)
		_, err = cs.UpdateStatus(ctx, got, metav1.UpdateOptions{})
		expectInvalid(t, "status.history longer than MaxHistory", err, "status.history")
	})

	t.Run("GlusterNode", func(t *testing.T) {
		cs := client.GlusterNodes(ns)
		created, err := cs.Create(ctx, validNode(ns, "status"), metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		created.Status.State = "Online"
		updated, err := cs.Update(ctx, created, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("update: %v", err)
		}
		if updated.Status.State != "" {
			t.Errorf("update of the main resource stored status.state %q; it must be ignored", updated.Status.State)
		}

		updated.Status = operatorv1alpha1.GlusterNodeStatus{
			ObservedGeneration: updated.Generation,
			State:              "Online",
			LastTransitionTime: &now,
			Message:            "peer alive",
			PeerID:             "5f0c2d1e-8b5a-4a53-9d62-2f3c1f6f1a10",
			Version:            "4.1.0",
			Address:            "gluster-zone-1-0.gluster.svc",
			Conditions: []metav1.Condition{{
				Type: operatorv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: "PeerOnline", LastTransitionTime: now,
			}},
			History: history(operatorv1alpha1.MaxHistory, now),
		}
		written, err := cs.UpdateStatus(ctx, updated, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("update status: %v", err)
		}
		if !apiequality.Semantic.DeepEqual(written.Status, updated.Status) {
			t.Errorf("status after UpdateStatus:\n got %s\nwant %s", toJSON(written.Status), toJSON(updated.Status))
		}

		written.Status.Conditions = append(written.Status.Conditions, written.Status.Conditions[0])
		_, err = cs.UpdateStatus(ctx, written, metav1.UpdateOptions{})
		expectInvalid(t, "two conditions of the same type", err, "status.conditions")
	})
}

// TestAPIInformerSeesObjects checks the generated informers and listers
// against the served resources.
func TestAPIInformerSeesObjects(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	ns := env.Namespace(t)
	client := operatorClient(t)
	if _, err := client.OperatorV1alpha1().GlusterClusters(ns).Create(ctx, validCluster(ns, "gluster"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.OperatorV1alpha1().GlusterNodes(ns).Create(ctx, validNode(ns, "gluster-zone-1-0"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	factory := externalversions.NewSharedInformerFactoryWithOptions(client, 0, externalversions.WithNamespace(ns))
	clusters := factory.Operator().V1alpha1().GlusterClusters()
	nodes := factory.Operator().V1alpha1().GlusterNodes()
	clusters.Informer()
	nodes.Informer()
	stop := make(chan struct{})
	defer func() {
		// Shutdown waits for the informers, which stop only once stop is
		// closed.
		close(stop)
		factory.Shutdown()
	}()
	factory.Start(stop)
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("informer for %v did not sync", typ)
		}
	}

	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		cl, err := clusters.Lister().GlusterClusters(ns).List(labels.Everything())
		if err != nil {
			return false, err
		}
		n, err := nodes.Lister().GlusterNodes(ns).Get("gluster-zone-1-0")
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return len(cl) == 1 && n.Spec.Cluster == "gluster", err
	})
	if err != nil {
		t.Fatalf("listers did not see the created objects: %v", err)
	}
}

// TestAPIRejectsInvalidObjects checks that the API server itself rejects
// each invalid object, with a message that names the offending field. Each
// case starts from validCluster or validNode, edits the JSON form, and either
// creates it or (update cases) updates a stored valid object with it.
func TestAPIRejectsInvalidObjects(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*apiTimeout)
	defer cancel()
	ns := env.Namespace(t)
	client := operatorClient(t)

	automatic := []op{set("spec.mode", "automatic")}
	for i := 0; i < 3; i++ {
		tmpl := "spec.nodeTemplates[" + strconv.Itoa(i) + "]."
		automatic = append(automatic, del(tmpl+"nodes"), set(tmpl+"minNodes", 1), set(tmpl+"maxNodes", 3))
	}
	external := []op{
		set("spec.mode", "external"),
		del("spec.nodeTemplates"),
		set("spec.external", map[string]any{"nodes": []any{map[string]any{"address": "192.0.2.10"}}}),
	}

	cases := []rejection{
		// GlusterCluster, on create.
		{name: "a template sets both a manual count and an automatic range", resource: clusters,
			ops: []op{set("spec.nodeTemplates[0].minNodes", 1)}, field: "minNodes"},
		{name: "a template's minNodes exceeds its maxNodes", resource: clusters,
			ops: append(clone(automatic), set("spec.nodeTemplates[0].minNodes", 4)), field: "spec.nodeTemplates[0].minNodes"},
		{name: "a template's freeStorageMin is not below its freeStorageMax", resource: clusters,
			ops:   append(clone(automatic), set("spec.nodeTemplates[0].freeStorageMin", "2Ti"), set("spec.nodeTemplates[0].freeStorageMax", "1Ti")),
			field: "spec.nodeTemplates[0].freeStorageMin"},
		{name: "manual mode, the default, has a template with an automatic range", resource: clusters,
			ops:   []op{del("spec.mode"), del("spec.nodeTemplates[0].nodes"), set("spec.nodeTemplates[0].minNodes", 1), set("spec.nodeTemplates[0].maxNodes", 3)},
			field: "spec.nodeTemplates[].minNodes and maxNodes apply only when spec.mode is automatic"},
		{name: "automatic mode has a template with a manual count", resource: clusters,
			ops:   append(clone(automatic), del("spec.nodeTemplates[0].minNodes"), del("spec.nodeTemplates[0].maxNodes"), set("spec.nodeTemplates[0].nodes", 2)),
			field: "spec.nodeTemplates[].nodes applies only when spec.mode is manual"},
		{name: "manual mode caps a template's storage", resource: clusters,
			ops:   []op{set("spec.nodeTemplates[0].maxStorage", "1Ti")},
			field: "spec.nodeTemplates[].maxStorage, freeStorageMin and freeStorageMax apply only when spec.mode is automatic"},
		{name: "manual mode sets a template's free-capacity band", resource: clusters,
			ops:   []op{set("spec.nodeTemplates[1].freeStorageMin", "100Gi")},
			field: "spec.nodeTemplates[].maxStorage, freeStorageMin and freeStorageMax apply only when spec.mode is automatic"},
		{name: "a template's maxStorage is below what its minNodes servers already have", resource: clusters,
			ops: append(clone(automatic), set("spec.nodeTemplates[0].minNodes", 2), set("spec.nodeTemplates[0].storage.deviceCount", 2),
				set("spec.nodeTemplates[0].maxStorage", "399Gi")),
			field: "spec.nodeTemplates[0].maxStorage"},
		{name: "a template's freeStorageMin is negative", resource: clusters,
			ops: append(clone(automatic), set("spec.nodeTemplates[0].freeStorageMin", "-1Gi")), field: "spec.nodeTemplates[0].freeStorageMin"},
		{name: "a template's freeStorageMax is negative", resource: clusters,
			ops: append(clone(automatic), set("spec.nodeTemplates[0].freeStorageMax", "-1Gi")), field: "spec.nodeTemplates[0].freeStorageMax"},
		{name: "a template asks for VDO, which GD2 cannot provide", resource: clusters,
			ops: []op{set("spec.nodeTemplates[0].vdo", true)}, field: "spec.nodeTemplates[0].vdo"},
		{name: "a template sets one of GD2's own variables", resource: clusters,
			ops: []op{set("spec.nodeTemplates[0].env", []any{map[string]any{"name": "GD2_PEERADDRESS", "value": "x:1"}})}, field: "spec.nodeTemplates[0].env"},
		{name: "the mode is unknown", resource: clusters,
			ops: []op{set("spec.mode", "hybrid")}, field: "spec.mode"},
		{name: "external mode lists no addresses", resource: clusters,
			ops: []op{set("spec.mode", "external"), del("spec.nodeTemplates")}, field: "spec.external"},
		{name: "external mode has an empty address list", resource: clusters,
			ops: append(clone(external), set("spec.external.nodes", []any{})), field: "spec.external.nodes"},
		{name: "external mode also has node templates", resource: clusters,
			ops:   append(clone(external), set("spec.nodeTemplates", []any{map[string]any{"name": "a", "zone": "a", "storage": map[string]any{"capacity": "1Gi"}}})),
			field: "spec.nodeTemplates"},
		{name: "manual mode lists external addresses", resource: clusters,
			ops: []op{set("spec.external", map[string]any{"nodes": []any{map[string]any{"address": "192.0.2.10"}}})}, field: "spec.external"},
		{name: "an external host name has a single label, which an EndpointSlice cannot hold", resource: clusters,
			ops: append(clone(external), set("spec.external.nodes[0].address", "localhost")), field: "spec.external.nodes[0].address"},
		{name: "an external address is a loopback IP, which no Service can route to", resource: clusters,
			ops: append(clone(external), set("spec.external.nodes[0].address", "127.0.0.1")), field: "spec.external.nodes[0].address"},
		{name: "an external address is a link-local IPv6 address", resource: clusters,
			ops: append(clone(external), set("spec.external.nodes[0].address", "fe80::1")), field: "spec.external.nodes[0].address"},
		{name: "an external port is zero", resource: clusters,
			ops: append(clone(external), set("spec.external.port", 0)), field: "spec.external.port"},
		{name: "an external port is above 65535", resource: clusters,
			ops: append(clone(external), set("spec.external.port", 70000)), field: "spec.external.port"},
		{name: "an external address is neither a host name nor an IP address", resource: clusters,
			ops: append(clone(external), set("spec.external.nodes[0].address", "gluster 1!")), field: "spec.external.nodes[0].address"},
		{name: "manual mode has a template without a node count", resource: clusters,
			ops: []op{del("spec.nodeTemplates[1].nodes")}, field: "spec.nodeTemplates[].nodes"},
		{name: "automatic mode has a template without minNodes and maxNodes", resource: clusters,
			ops: append(clone(automatic), del("spec.nodeTemplates[2].minNodes"), del("spec.nodeTemplates[2].maxNodes")), field: "minNodes"},
		{name: "a node count is above the maximum", resource: clusters,
			ops: []op{set("spec.nodeTemplates[0].nodes", 1000)}, field: "spec.nodeTemplates[0].nodes"},
		{name: "a manual or automatic cluster has no node templates", resource: clusters,
			ops: []op{del("spec.nodeTemplates")}, field: "spec.nodeTemplates"},
		{name: "a zone is not a DNS label", resource: clusters,
			ops: []op{set("spec.nodeTemplates[0].zone", "Zone_A")}, field: "spec.nodeTemplates[0].zone"},
		{name: "a template name is not a DNS label", resource: clusters,
			ops: []op{set("spec.nodeTemplates[0].name", "zone.1")}, field: "spec.nodeTemplates[0].name"},
		{name: "two templates have the same name", resource: clusters,
			ops: []op{set("spec.nodeTemplates[1].name", "zone-1")}, field: "spec.nodeTemplates[1]"},
		{name: "a template's capacity is zero", resource: clusters,
			ops: []op{set("spec.nodeTemplates[0].storage.capacity", "0")}, field: "spec.nodeTemplates[0].storage.capacity"},
		{name: "a template's capacity is negative", resource: clusters,
			ops: []op{set("spec.nodeTemplates[0].storage.capacity", "-100Gi")}, field: "spec.nodeTemplates[0].storage.capacity"},
		{name: "a template's capacity is not a quantity", resource: clusters,
			ops: []op{set("spec.nodeTemplates[0].storage.capacity", "lots")}, field: "spec.nodeTemplates[0].storage.capacity"},
		{name: "a template asks for no devices", resource: clusters,
			ops: []op{set("spec.nodeTemplates[0].storage.deviceCount", 0)}, field: "spec.nodeTemplates[0].storage.deviceCount"},
		{name: "permissibleDowntime is not a duration", resource: clusters,
			ops: []op{set("spec.failurePolicy.permissibleDowntime", "half an hour")}, field: "spec.failurePolicy.permissibleDowntime"},
		{name: "permissibleDowntime is zero", resource: clusters,
			ops: []op{set("spec.failurePolicy.permissibleDowntime", "0s")}, field: "spec.failurePolicy.permissibleDowntime"},
		{name: "offlineGrace is not a duration", resource: clusters,
			ops: []op{set("spec.failurePolicy.offlineGrace", "a bit")}, field: "spec.failurePolicy.offlineGrace"},
		{name: "offlineGrace is negative", resource: clusters,
			ops: []op{set("spec.failurePolicy.offlineGrace", "-5s")}, field: "spec.failurePolicy.offlineGrace"},
		{name: "offlineGrace is not shorter than permissibleDowntime", resource: clusters,
			ops: []op{set("spec.failurePolicy.permissibleDowntime", "1m"), set("spec.failurePolicy.offlineGrace", "1m")}, field: "spec.failurePolicy.offlineGrace"},
		{name: "recoveryWindow is not a duration", resource: clusters,
			ops: []op{set("spec.failurePolicy.recoveryWindow", "2 minutes")}, field: "spec.failurePolicy.recoveryWindow"},
		{name: "healTimeout is not a duration", resource: clusters,
			ops: []op{set("spec.upgradePolicy.healTimeout", "1d")}, field: "spec.upgradePolicy.healTimeout"},
		{name: "autoscaling is set outside automatic mode", resource: clusters,
			ops: []op{set("spec.autoscaling", map[string]any{"scaleDown": false})}, field: "spec.autoscaling"},
		{name: "the autoscaling cooldown is not a duration", resource: clusters,
			ops: append(clone(automatic), set("spec.autoscaling.cooldown", "ten minutes")), field: "spec.autoscaling.cooldown"},
		{name: "the autoscaling cooldown is negative", resource: clusters,
			ops: append(clone(automatic), set("spec.autoscaling.cooldown", "-1m")), field: "spec.autoscaling.cooldown"},
		{name: "the autoscaling scaleUp toggle is not a boolean", resource: clusters,
			ops: append(clone(automatic), set("spec.autoscaling.scaleUp", "yes")), field: "spec.autoscaling.scaleUp"},
		{name: "maxParallel is below one", resource: clusters,
			ops: []op{set("spec.upgradePolicy.maxParallel", 0)}, field: "spec.upgradePolicy.maxParallel"},
		{name: "the server image is empty", resource: clusters,
			ops: []op{set("spec.gluster.image", "")}, field: "spec.gluster.image"},
		{name: "the server version is not a semantic version", resource: clusters,
			ops: []op{set("spec.gluster.version", "four-one")}, field: "spec.gluster.version"},
		{name: "the CSI client version is newer than the server version", resource: clusters,
			ops: []op{set("spec.csi.version", "v5.0")}, field: "spec.csi.version"},
		{name: "a CSI image is empty", resource: clusters,
			ops: []op{set("spec.csi.fileImage", "")}, field: "spec.csi.fileImage"},
		{name: "a StorageClass name is not a DNS subdomain", resource: clusters,
			ops: []op{set("spec.csi.storageClasses", map[string]any{"file": map[string]any{"name": "Gluster_File"}})}, field: "spec.csi.storageClasses.file.name"},
		{name: "a StorageClass reclaimPolicy is Recycle, which CSI volumes do not support", resource: clusters,
			ops: []op{set("spec.csi.storageClasses", map[string]any{"file": map[string]any{"reclaimPolicy": "Recycle"}})}, field: "spec.csi.storageClasses.file.reclaimPolicy"},
		{name: "a StorageClass lists no allowed zones, which would allow none", resource: clusters,
			ops: []op{set("spec.csi.storageClasses", map[string]any{"file": map[string]any{"allowedZones": []any{}}})}, field: "spec.csi.storageClasses.file.allowedZones"},
		{name: "an allowed zone is not a label value", resource: clusters,
			ops: []op{set("spec.csi.storageClasses", map[string]any{"file": map[string]any{"allowedZones": []any{"zone 1"}}})}, field: "spec.csi.storageClasses.file.allowedZones[0]"},
		{name: "an allowed zone is listed twice", resource: clusters,
			ops: []op{set("spec.csi.storageClasses", map[string]any{"file": map[string]any{"allowedZones": []any{"zone-1", "zone-1"}}})}, field: "spec.csi.storageClasses.file.allowedZones[1]"},
		{name: "a block StorageClass is configured, though no block driver runs", resource: clusters,
			ops:   []op{set("spec.csi.storageClasses", map[string]any{"file": map[string]any{"isDefault": true}, "block": map[string]any{"name": "gluster"}})},
			field: "spec.csi.storageClasses.block"},
		{name: "a class asks for one copy, which anthill could never drain or restart", resource: clusters,
			ops: []op{set("spec.csi.storageClasses", map[string]any{"file": map[string]any{"replicas": 1}})}, field: "spec.csi.storageClasses.file.replicas"},
		{name: "a class asks for four copies, which GD2 refuses", resource: clusters,
			ops: []op{set("spec.csi.storageClasses", map[string]any{"file": map[string]any{"replicas": 4}})}, field: "spec.csi.storageClasses.file.replicas"},
		{name: "a class asks for an arbiter type the driver does not know", resource: clusters,
			ops:   []op{set("spec.csi.storageClasses", map[string]any{"file": map[string]any{"arbiterType": "full", "arbiterPath": "ta.example.com:/ta"}})},
			field: "spec.csi.storageClasses.file.arbiterType"},
		{name: "a thin-arbiter class says not where the arbiter runs", resource: clusters,
			ops: []op{set("spec.csi.storageClasses", map[string]any{"file": map[string]any{"arbiterType": "thin"}})}, field: "spec.csi.storageClasses.file.arbiterPath"},
		{name: "a class names an arbiter path without a thin arbiter, which the driver ignores", resource: clusters,
			ops: []op{set("spec.csi.storageClasses", map[string]any{"file": map[string]any{"arbiterPath": "ta.example.com:/ta"}})}, field: "spec.csi.storageClasses.file.arbiterPath"},
		{name: "a thin-arbiter class asks for three copies", resource: clusters,
			ops:   []op{set("spec.csi.storageClasses", map[string]any{"file": map[string]any{"replicas": 3, "arbiterType": "thin", "arbiterPath": "ta.example.com:/ta"}})},
			field: "spec.csi.storageClasses.file.replicas"},
		{name: "an arbiter path has no brick path", resource: clusters,
			ops:   []op{set("spec.csi.storageClasses", map[string]any{"file": map[string]any{"arbiterType": "thin", "arbiterPath": "ta.example.com"}})},
			field: "spec.csi.storageClasses.file.arbiterPath"},
		{name: "an arbiter path's port is above 65535", resource: clusters,
			ops:   []op{set("spec.csi.storageClasses", map[string]any{"file": map[string]any{"arbiterType": "thin", "arbiterPath": "ta.example.com:/ta:70000"}})},
			field: "spec.csi.storageClasses.file.arbiterPath"},
		{name: "a class asks for a brick type the driver does not know", resource: clusters,
			ops: []op{set("spec.csi.storageClasses", map[string]any{"file": map[string]any{"brickType": "zfs"}})}, field: "spec.csi.storageClasses.file.brickType"},
		{name: "a class asks for loop bricks, which no template's servers have", resource: clusters,
			ops: []op{set("spec.csi.storageClasses", map[string]any{"file": map[string]any{"brickType": "loop"}})}, field: "spec.csi.storageClasses.file.brickType"},
		{name: "a class asks for more copies than the templates have zones", resource: clusters,
			ops:   []op{set("spec.nodeTemplates[2].zone", "zone-2"), set("spec.csi.storageClasses", map[string]any{"file": map[string]any{"replicas": 3}})},
			field: "spec.csi.storageClasses.file.replicas"},
		{name: "an additional class has no name", resource: clusters,
			ops: []op{set("spec.csi.storageClasses", map[string]any{"additional": []any{map[string]any{"replicas": 3}}})}, field: "spec.csi.storageClasses.additional"},
		{name: "two additional classes share a name", resource: clusters,
			ops:   []op{set("spec.csi.storageClasses", map[string]any{"additional": []any{map[string]any{"name": "r3", "replicas": 3}, map[string]any{"name": "r3", "replicas": 2}}})},
			field: "spec.csi.storageClasses.additional"},
		{name: "an additional class takes the file class's name", resource: clusters,
			ops:   []op{set("spec.csi.storageClasses", map[string]any{"file": map[string]any{"name": "gluster"}, "additional": []any{map[string]any{"name": "gluster", "replicas": 3}}})},
			field: "spec.csi.storageClasses.additional"},
		{name: "two classes are the default", resource: clusters,
			ops:   []op{set("spec.csi.storageClasses", map[string]any{"file": map[string]any{"isDefault": true}, "additional": []any{map[string]any{"name": "r3", "isDefault": true}}})},
			field: "spec.csi.storageClasses.additional"},
		{name: "an additional class asks for five copies", resource: clusters,
			ops:   []op{set("spec.csi.storageClasses", map[string]any{"additional": []any{map[string]any{"name": "r5", "replicas": 5}}})},
			field: "spec.csi.storageClasses.additional[0].replicas"},
		{name: "an additional class asks for loop bricks, which no template's servers have", resource: clusters,
			ops:   []op{set("spec.csi.storageClasses", map[string]any{"additional": []any{map[string]any{"name": "lite", "brickType": "loop"}}})},
			field: "spec.csi.storageClasses.additional"},
		{name: "an additional thin-arbiter class on templates of one zone", resource: clusters,
			ops: []op{set("spec.nodeTemplates[1].zone", "zone-1"), set("spec.nodeTemplates[2].zone", "zone-1"),
				set("spec.csi.storageClasses", map[string]any{"additional": []any{map[string]any{"name": "ta", "arbiterType": "thin", "arbiterPath": "ta.example.com:/ta"}}})},
			field: "spec.csi.storageClasses.additional"},
		{name: "an automation switch is not a boolean", resource: clusters,
			ops: []op{set("spec.automation", map[string]any{"markFailed": "no"})}, field: "spec.automation.markFailed"},
		{name: "a node plugin selector key is not a label key", resource: clusters,
			ops: []op{set("spec.csi.nodeSelector", map[string]any{"storage client": "yes"})}, field: "spec.csi.nodeSelector"},
		{name: "a node plugin selector value is longer than a label value", resource: clusters,
			ops: []op{set("spec.csi.nodeSelector", map[string]any{"example.com/storage-client": strings.Repeat("y", 64)})}, field: "spec.csi.nodeSelector"},
		{name: "a driver is unknown", resource: clusters,
			ops: []op{set("spec.drivers", []any{"file", "nfs"})}, field: "spec.drivers[1]"},
		{name: "a driver is listed twice", resource: clusters,
			ops: []op{set("spec.drivers", []any{"file", "file"})}, field: "spec.drivers[1]"},
		{name: "the management endpoint is not a URL", resource: clusters,
			ops: []op{set("spec.management.endpoint", "gd2.gluster.svc:24007")}, field: "spec.management.endpoint"},
		{name: "the management endpoint is not http or https", resource: clusters,
			ops: []op{set("spec.management.endpoint", "ftp://gd2.gluster.svc/")}, field: "spec.management.endpoint"},
		{name: "the CA secret reference has no name", resource: clusters,
			ops: []op{set("spec.caSecretRef", map[string]any{"key": "ca.crt"})}, field: "spec.caSecretRef.name"},
		{name: "snapshots are asked for with no LVM node template", resource: clusters,
			ops: []op{
				set("spec.nodeTemplates[0].storage.provisioner", "loop"), set("spec.nodeTemplates[1].storage.provisioner", "loop"),
				set("spec.nodeTemplates[2].storage.provisioner", "loop"), set("spec.csi.snapshots", map[string]any{"enabled": true}),
			}, field: "spec.csi.snapshots.enabled"},
		{name: "the snapshot class keeps its snapshots some other way", resource: clusters,
			ops: []op{set("spec.csi.snapshots", map[string]any{"enabled": true, "deletionPolicy": "Keep"})}, field: "spec.csi.snapshots.deletionPolicy"},
		{name: "the snapshot class name is not a DNS subdomain", resource: clusters,
			ops: []op{set("spec.csi.snapshots", map[string]any{"enabled": true, "className": "Gluster_Snaps"})}, field: "spec.csi.snapshots.className"},

		// GlusterCluster, on update.
		{name: "the mode changes from manual to external", resource: clusters, update: true,
			ops: external, field: "spec.mode"},
		{name: "the node plugins get a selector after creation", resource: clusters, update: true,
			ops: []op{set("spec.csi.nodeSelector", map[string]any{"example.com/storage-client": "true"})}, field: "spec.csi.nodeSelector"},
		{name: "snapshots are turned on after creation", resource: clusters, update: true,
			ops: []op{set("spec.csi.snapshots", map[string]any{"enabled": true})}, field: "spec.csi.snapshots"},
		{name: "a template's zone changes", resource: clusters, update: true,
			ops: []op{set("spec.nodeTemplates[0].zone", "zone-9")}, field: "spec.nodeTemplates[0].zone"},
		{name: "the server version is lowered with no upgrade under way", resource: clusters, update: true,
			ops: []op{set("spec.gluster.version", "4.0.9"), set("spec.csi.version", "4.0.0")}, field: "spec.gluster.version cannot be lowered"},
		{name: "the server version is lowered by its minor, written with a v", resource: clusters, update: true,
			ops: []op{set("spec.gluster.version", "v4.0"), set("spec.csi.version", "4.0.0")}, field: "spec.gluster.version cannot be lowered"},
		{name: "a block StorageClass is added to a stored cluster", resource: clusters, update: true,
			ops: []op{set("spec.csi.storageClasses", map[string]any{"block": map[string]any{"create": false}})}, field: "spec.csi.storageClasses.block"},

		// GlusterNode, on create.
		{name: "a node asks for VDO, which GD2 cannot provide", resource: nodes,
			ops: []op{set("spec.storage.vdo", true)}, field: "spec.storage.vdo"},
		{name: "a node names no cluster", resource: nodes,
			ops: []op{set("spec.cluster", "")}, field: "spec.cluster"},
		// A node made from a template always names a zone. Whether that
		// zone is the template's, or the template exists at all, depends
		// on the GlusterCluster: no CRD rule can look at another object.
		{name: "a node names a template but no zone", resource: nodes,
			ops: []op{del("spec.zone")}, field: "spec.zone"},
		{name: "an external node asks for claims", resource: nodes,
			ops: []op{set("spec.externalAddress", "gluster-1.storage.example.com")}, field: "spec.storage"},
		{name: "an external node has a placement", resource: nodes,
			ops: []op{del("spec.storage"), set("spec.externalAddress", "192.0.2.7"),
				set("spec.tolerations", []any{map[string]any{"key": "storage", "operator": "Exists"}})},
			field: "spec.externalAddress"},
		{name: "a node's zone is not a DNS label", resource: nodes,
			ops: []op{set("spec.zone", "-zone-1")}, field: "spec.zone"},
		{name: "a node's template is not a DNS label", resource: nodes,
			ops: []op{set("spec.template", "Zone 1")}, field: "spec.template"},
		{name: "a node's desiredState is unknown", resource: nodes,
			ops: []op{set("spec.desiredState", "maintenance")}, field: "spec.desiredState"},
		{name: "a node has both host devices and claims", resource: nodes,
			ops: []op{set("spec.storage.devices", []any{"/dev/sdb"})}, field: "spec.storage"},
		{name: "a node's storage has neither host devices nor claims", resource: nodes,
			ops: []op{set("spec.storage", map[string]any{"vdo": true})}, field: "spec.storage"},
		{name: "a node's host device is not under /dev", resource: nodes,
			ops: []op{set("spec.storage", map[string]any{"devices": []any{"sdb"}})}, field: "spec.storage.devices[0]"},
		{name: "a node on host devices names no host", resource: nodes,
			ops: []op{set("spec.storage", map[string]any{"devices": []any{"/dev/sdb"}})}, field: "spec.storage.host"},
		{name: "a node on claims names a host", resource: nodes,
			ops: []op{set("spec.storage.host", "host-a")}, field: "spec.storage.host"},
		{name: "a node's host is not a node name", resource: nodes,
			ops: []op{set("spec.storage", map[string]any{"devices": []any{"/dev/sdb"}, "host": "Host A"})}, field: "spec.storage.host"},
		{name: "a node's claim capacity is zero", resource: nodes,
			ops: []op{set("spec.storage.capacity", "0Gi")}, field: "spec.storage.capacity"},
		{name: "a node's external address is not an address", resource: nodes,
			ops: []op{set("spec.externalAddress", "http://gluster-1/")}, field: "spec.externalAddress"},

		// GlusterNode, on update.
		{name: "a node's cluster changes", resource: nodes, update: true,
			ops: []op{set("spec.cluster", "other")}, field: "spec.cluster"},
		{name: "a node's zone changes", resource: nodes, update: true,
			ops: []op{set("spec.zone", "zone-2")}, field: "spec.zone"},
	}

	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := fmt.Sprintf("reject-%02d", i)
			err := c.run(ctx, client, ns, name)
			expectInvalid(t, c.name, err, c.field)
		})
	}
}

// TestAPIStorageClassesPerVolumeType: the API server accepts a class per
// kind of volume beside the file class, with the parameters the driver
// reads, and refuses an additional class named like the file class's
// default (<cluster>-file), which only the cluster's name can tell, and
// accepts that name once the file class is not created.
func TestAPIStorageClassesPerVolumeType(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	ns := env.Namespace(t)
	client := operatorClient(t).OperatorV1alpha1().GlusterClusters(ns)

	c := validCluster(ns, "classes")
	c.Spec.NodeTemplates[2].Storage.Provisioner = "loop"
	c.Spec.CSI.StorageClasses = &operatorv1alpha1.CSIStorageClasses{
		File: &operatorv1alpha1.StorageClassSpec{IsDefault: true},
		Additional: []operatorv1alpha1.StorageClassSpec{
			{Name: "gluster-replica3", Replicas: ptr.To[int32](3), BrickType: "lvm"},
			{Name: "gluster-thin-arbiter", Replicas: ptr.To[int32](2), ArbiterType: "thin", ArbiterPath: "ta.example.com:/bricks/ta:24007"},
			{Name: "gluster-thin-arbiter-ip", ArbiterType: "thin", ArbiterPath: "192.0.2.9:/bricks/ta"},
			{Name: "gluster-loop", BrickType: "loop", ReclaimPolicy: corev1.PersistentVolumeReclaimRetain, AllowedZones: []string{"zone-3"}},
		},
	}
	if _, err := client.Create(ctx, c, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a cluster with a class per volume type was refused: %v", err)
	}

	c = validCluster(ns, "dflt")
	c.Spec.CSI.StorageClasses = &operatorv1alpha1.CSIStorageClasses{Additional: []operatorv1alpha1.StorageClassSpec{{Name: "dflt-file", Replicas: ptr.To[int32](2)}}}
	_, err := client.Create(ctx, c, metav1.CreateOptions{})
	expectInvalid(t, "an additional class takes the file class's default name", err, "spec.csi.storageClasses.additional")

	c.Spec.CSI.StorageClasses.File = &operatorv1alpha1.StorageClassSpec{Create: ptr.To(false)}
	if _, err := client.Create(ctx, c, metav1.CreateOptions{}); err != nil {
		t.Fatalf("an additional class named <cluster>-file, with the file class not created, was refused: %v", err)
	}
}

const (
	clusters = operatorv1alpha1.GlusterClusterResource
	nodes    = operatorv1alpha1.GlusterNodeResource
)

// rejection is one object the API server must refuse.
type rejection struct {
	name     string // what is wrong, as a sentence
	resource string // clusters or nodes
	update   bool   // store a valid object first, then update it with ops applied
	ops      []op   // edits to the valid object's JSON form
	field    string // the API server's message must contain this
}

func (c rejection) run(ctx context.Context, client versioned.Interface, ns, name string) error {
	var valid any
	var kind string
	switch c.resource {
	case clusters:
		valid, kind = validCluster(ns, name), "GlusterCluster"
	case nodes:
		valid, kind = validNode(ns, name), "GlusterNode"
	default:
		return fmt.Errorf("unknown resource %q", c.resource)
	}
	rest := client.OperatorV1alpha1().RESTClient()
	obj, err := toMap(valid)
	if err != nil {
		return err
	}
	obj["apiVersion"] = operatorv1alpha1.SchemeGroupVersion.String()
	obj["kind"] = kind

	if c.update {
		var stored map[string]any
		body, _ := json.Marshal(obj)
		raw, err := rest.Post().Namespace(ns).Resource(c.resource).SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Raw()
		if err != nil {
			return fmt.Errorf("create the valid object to update: %w", err)
		}
		if err := json.Unmarshal(raw, &stored); err != nil {
			return err
		}
		if err := applyOps(stored, c.ops); err != nil {
			return err
		}
		body, _ = json.Marshal(stored)
		return rest.Put().Namespace(ns).Resource(c.resource).Name(name).SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Error()
	}
	if err := applyOps(obj, c.ops); err != nil {
		return err
	}
	body, _ := json.Marshal(obj)
	return rest.Post().Namespace(ns).Resource(c.resource).SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Error()
}

// expectInvalid fails unless err is the API server's 422 Invalid and its
// message names field. It logs the message: the exact wording users see is
// part of what this test documents.
func expectInvalid(t *testing.T, what string, err error, field string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: accepted, want rejected", what)
		return
	}
	t.Logf("%s\n    rejected: %v", what, err)
	if !apierrors.IsInvalid(err) {
		t.Errorf("%s: error is not Invalid (422): %v", what, err)
		return
	}
	if !strings.Contains(err.Error(), field) {
		t.Errorf("%s: message does not name %q: %v", what, field, err)
	}
}

// TestAPISamplesAccepted creates every object in manifests/samples.
func TestAPISamplesAccepted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	ns := env.Namespace(t)
	client := operatorClient(t).OperatorV1alpha1()

	files, err := filepath.Glob(filepath.Join("..", "..", "manifests", "samples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no samples found in manifests/samples")
	}
	seen := map[string]int{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range splitYAML(raw) {
			var meta metav1.TypeMeta
			if err := yaml.Unmarshal(doc, &meta); err != nil {
				t.Fatalf("%s document %d: %v", f, i, err)
			}
			var name string
			switch meta.Kind {
			case "GlusterCluster":
				obj := &operatorv1alpha1.GlusterCluster{}
				if err := yaml.UnmarshalStrict(doc, obj); err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				created, err := client.GlusterClusters(ns).Create(ctx, obj, metav1.CreateOptions{})
				if err != nil {
					t.Errorf("%s: rejected: %v", f, err)
					continue
				}
				name = created.Name
			case "GlusterNode":
				obj := &operatorv1alpha1.GlusterNode{}
				if err := yaml.UnmarshalStrict(doc, obj); err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				created, err := client.GlusterNodes(ns).Create(ctx, obj, metav1.CreateOptions{})
				if err != nil {
					t.Errorf("%s: rejected: %v", f, err)
					continue
				}
				name = created.Name
			default:
				t.Errorf("%s document %d: unexpected kind %q", f, i, meta.Kind)
				continue
			}
			seen[meta.Kind]++
			t.Logf("%s: %s %s accepted", filepath.Base(f), meta.Kind, name)
		}
	}
	if seen["GlusterCluster"] < 2 || seen["GlusterNode"] < 1 {
		t.Errorf("samples cover %v; want at least two GlusterClusters and one GlusterNode", seen)
	}
}

func splitYAML(raw []byte) [][]byte {
	var docs [][]byte
	for _, d := range bytes.Split(raw, []byte("\n---")) {
		if len(bytes.TrimSpace(stripComments(d))) > 0 {
			docs = append(docs, d)
		}
	}
	return docs
}

func stripComments(doc []byte) []byte {
	var out [][]byte
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			out = append(out, line)
		}
	}
	return bytes.Join(out, []byte("\n"))
}

// op edits one field of an object's JSON form: it sets the value at a path
// such as spec.nodeTemplates[0].minNodes, or removes the field when remove
// is true.
type op struct {
	path   string
	value  any
	remove bool
}

func set(path string, value any) op { return op{path: path, value: value} }
func del(path string) op            { return op{path: path, remove: true} }

func clone(ops []op) []op { return append([]op(nil), ops...) }

func applyOps(obj map[string]any, ops []op) error {
	for _, o := range ops {
		if err := applyOp(obj, o); err != nil {
			return fmt.Errorf("%s: %w", o.path, err)
		}
	}
	return nil
}

func applyOp(obj map[string]any, o op) error {
	segs := strings.Split(o.path, ".")
	cur := obj
	for i, seg := range segs {
		key, index, hasIndex, err := parseSegment(seg)
		if err != nil {
			return err
		}
		last := i == len(segs)-1
		if !hasIndex {
			if last {
				if o.remove {
					delete(cur, key)
				} else {
					cur[key] = copyJSON(o.value)
				}
				return nil
			}
			next, ok := cur[key].(map[string]any)
			if !ok {
				next = map[string]any{}
				cur[key] = next
			}
			cur = next
			continue
		}
		list, ok := cur[key].([]any)
		if !ok || index >= len(list) {
			return fmt.Errorf("no element %d in %s", index, key)
		}
		if last {
			if o.remove {
				cur[key] = append(list[:index:index], list[index+1:]...)
			} else {
				list[index] = copyJSON(o.value)
			}
			return nil
		}
		next, ok := list[index].(map[string]any)
		if !ok {
			return fmt.Errorf("element %d of %s is not an object", index, key)
		}
		cur = next
	}
	return nil
}

func parseSegment(seg string) (key string, index int, hasIndex bool, err error) {
	open := strings.IndexByte(seg, '[')
	if open < 0 {
		return seg, 0, false, nil
	}
	if !strings.HasSuffix(seg, "]") {
		return "", 0, false, fmt.Errorf("bad path segment %q", seg)
	}
	index, err = strconv.Atoi(seg[open+1 : len(seg)-1])
	return seg[:open], index, true, err
}

// copyJSON returns a deep copy of a JSON-like value, so that objects edited
// by one case never share maps or slices with another case's ops.
func copyJSON(v any) any {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		panic(err)
	}
	return out
}

func toMap(v any) (map[string]any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(raw, &m)
}

func toJSON(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%+v", v)
	}
	return string(raw)
}

func assertSameSpec(t *testing.T, when string, want, got any) {
	t.Helper()
	if !apiequality.Semantic.DeepEqual(want, got) {
		t.Errorf("spec %s differs from what was sent:\n got %s\nwant %s", when, toJSON(got), toJSON(want))
	}
}

// history returns n transition records, oldest first.
func history(n int, at metav1.Time) []operatorv1alpha1.TransitionRecord {
	out := make([]operatorv1alpha1.TransitionRecord, n)
	for i := range out {
		out[i] = operatorv1alpha1.TransitionRecord{
			Time: at, Machine: "Node", From: "Online", To: "Offline", Event: "peerLost", Reason: "PeerNotAlive",
		}
		if i%2 == 1 {
			out[i].From, out[i].To, out[i].Event, out[i].Reason = "Offline", "Online", "peerSeen", "PeerAlive"
		}
	}
	return out
}

// storageNodeAffinity requires Kubernetes nodes labelled for storage.
func storageNodeAffinity() *corev1.NodeAffinity {
	return &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{
					Key: "node-role.example.com/storage", Operator: corev1.NodeSelectorOpExists,
				}},
			}},
		},
	}
}
