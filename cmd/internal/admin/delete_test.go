package admin

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/gluster/anthill/cmd/internal/cli"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	anthillfake "github.com/gluster/anthill/kube/client/clientset/versioned/fake"
	"github.com/gluster/anthill/kube/machines/cluster"
	"github.com/gluster/anthill/kube/objects"
)

func TestShowDeletionPlanNamesWhatHoldsIt(t *testing.T) {
	c := glusterCluster("ns", "gc", "zone-1")
	c.Spec.Mode, c.Status.Phase = operatorv1alpha1.ClusterModeManual, "Ready"
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-1"},
		Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{
			CSI: &corev1.CSIPersistentVolumeSource{Driver: objects.CSIDriverName(operatorv1alpha1.GlusterDriverFile)},
		}},
	}
	ac := anthillfake.NewSimpleClientset(c, glusterNode("ns", "gc-b", "gc"), glusterNode("ns", "gc-a", "gc"), glusterNode("ns", "x-1", "x"))
	var out bytes.Buffer
	if err := showDeletionPlan(context.Background(), kubefake.NewClientset(pv), ac, c, &out); err != nil {
		t.Fatal(err)
	}
	want := "Plan: delete GlusterCluster ns/gc (mode manual, phase Ready)\n" +
		"The operator's finalizer (operator.gluster.org/cluster-protection) then:\n" +
		"  1. waits while PersistentVolumes provisioned from the cluster exist: 1: pv-1\n" +
		"  2. deletes the GlusterNodes one at a time, each drained and detached first: 2: gc-a, gc-b\n" +
		"  3. deletes the CSI drivers, the Services, etcd and the auth secret\n" +
		"  then the GlusterCluster is gone.\n" +
		"Blocked now: 1 PersistentVolume(s) still use the cluster; delete them first: pv-1. (PersistentVolumesExist)\n"
	if out.String() != want {
		t.Errorf("plan\n%s\nwant\n%s", out.String(), want)
	}
}

func TestWriteDeletionPlanOfOtherClusters(t *testing.T) {
	external := glusterCluster("ns", "ext")
	external.Spec.Mode = operatorv1alpha1.ClusterModeExternal
	paused := glusterCluster("ns", "p", "zone-1")
	paused.Spec.Paused = true
	deleting := glusterCluster("ns", "d")
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	tests := []struct {
		name  string
		c     *operatorv1alpha1.GlusterCluster
		pvErr error
		want  []string
	}{
		{name: "external", c: external, want: []string{"the external pool, its peers and volumes are left as they are", "First step: Deleting the CSI drivers, the management Service"}},
		{name: "paused", c: paused, want: []string{"spec.paused is set", "Blocked now: The cluster is paused", "(Paused)"}},
		{name: "no PersistentVolumes readable", c: glusterCluster("ns", "gc"), pvErr: errors.New("forbidden"), want: []string{"unknown here (cannot list PersistentVolumes: forbidden); the operator checks them", ": none\n"}},
		{name: "already deleting", c: deleting, want: []string{"exist: none\n", "First step: "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			writeDeletionPlan(&b, tt.c, cluster.PreviewDeletion(tt.c, nil, nil), tt.pvErr)
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("plan lacks %q:\n%s", w, b.String())
				}
			}
		})
	}
	var out bytes.Buffer
	if err := showDeletionPlan(context.Background(), kubefake.NewClientset(), anthillfake.NewSimpleClientset(deleting), deleting, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "It is already being deleted (since 2026-01-02T03:04:05Z).\n") {
		t.Errorf("plan of a cluster being deleted:\n%s", out.String())
	}
}

func TestDeletionHoldSaysWhatTheOperatorLastDecided(t *testing.T) {
	c := glusterCluster("ns", "gc")
	if got := deletionHold(c); got != "phase - (the operator has not acted on the deletion yet)" {
		t.Errorf("before the operator: %q", got)
	}
	c.Status.Phase = "Deleting"
	c.Status.Conditions = []metav1.Condition{{Type: operatorv1alpha1.ConditionProgressing, Reason: "PersistentVolumesExist", Message: "1 PersistentVolume(s) still use the cluster"}}
	c.Spec.Paused = true
	if got := deletionHold(c); got != "phase Deleting: PersistentVolumesExist: 1 PersistentVolume(s) still use the cluster; spec.paused holds the teardown" {
		t.Errorf("while held: %q", got)
	}
}

func TestWaitClusterGone(t *testing.T) {
	c := glusterCluster("ns", "gc")
	c.UID = "u1"
	c.Status.Phase = "Deleting"
	var out bytes.Buffer
	err := waitClusterGone(context.Background(), anthillfake.NewSimpleClientset(c), "ns", "gc", "u1", 1500*time.Millisecond, &out)
	if cli.Code(err) != cli.ExitTimeout || !strings.Contains(err.Error(), "timed out after 1.5s waiting for GlusterCluster ns/gc to be deleted (phase Deleting)") {
		t.Errorf("waitClusterGone = %v (code %d), want a timeout naming the phase, code 124", err, cli.Code(err))
	}
	if strings.Count(out.String(), "waiting: ") != 1 {
		t.Errorf("the hold should be said once while it does not change:\n%s", out.String())
	}
	out.Reset()
	if err := waitClusterGone(context.Background(), anthillfake.NewSimpleClientset(), "ns", "gc", "u1", time.Minute, &out); err != nil || out.String() != "GlusterCluster ns/gc is gone\n" {
		t.Errorf("waitClusterGone of a cluster that is gone = %v, %q", err, out.String())
	}
	// A new cluster under the same name: the one deleted is gone.
	if err := waitClusterGone(context.Background(), anthillfake.NewSimpleClientset(c), "ns", "gc", "u0", time.Minute, &out); err != nil {
		t.Errorf("waitClusterGone of a cluster replaced since = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := waitClusterGone(ctx, anthillfake.NewSimpleClientset(c), "ns", "gc", "u1", time.Minute, &out); !errors.Is(err, context.Canceled) {
		t.Errorf("an interrupted wait = %v, want context.Canceled", err)
	}
}
