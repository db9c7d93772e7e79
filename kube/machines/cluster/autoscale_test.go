package cluster

import (
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/internal/fixtures"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

var autoT0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// autoCluster is an automatic cluster of template z1 (1..3 nodes of two
// 100Gi devices, band 40Gi..150Gi), scaleDown off and a 5m cooldown.
func autoCluster() *operatorv1alpha1.GlusterCluster {
	c := fixtures.Cluster("auto")
	c.Spec.Mode = operatorv1alpha1.ClusterModeAutomatic
	tm := &c.Spec.NodeTemplates[0]
	tm.Nodes, tm.MinNodes, tm.MaxNodes = nil, ptr.To[int32](1), ptr.To[int32](3)
	tm.FreeStorageMin, tm.FreeStorageMax = ptr.To(fixtures.Quantity("40Gi")), ptr.To(fixtures.Quantity("150Gi"))
	tm.MaxStorage = ptr.To(fixtures.Quantity("1Ti"))
	c.Spec.Autoscaling = &operatorv1alpha1.AutoscalingSpec{ScaleDown: ptr.To(false), Cooldown: &metav1.Duration{Duration: 5 * time.Minute}}
	return c
}

func autoNode(name, peer string) *operatorv1alpha1.GlusterNode {
	n := fixtures.Node("auto", name, fixtures.PVCStorage(2))
	n.Status.State, n.Status.PeerID = string(states.NodeOnline), peer
	return n
}

// The autoscaler reads every knob it documents: the toggles and cooldown
// of spec.autoscaling, each template's bounds, band, maxStorage and raw
// node size, the recorded counts and last step, and each node's free and
// allocated space from its own peer's devices, and its own peer's brick
// count, which the scale-down order goes by.
func TestAutoscaleInputReadsTheSpecTheStatusAndTheDevices(t *testing.T) {
	c := autoCluster()
	last := metav1.NewTime(autoT0.Add(-time.Minute))
	c.Status.Autoscaling = &operatorv1alpha1.AutoscalingStatus{LastScaleTime: &last, Templates: []operatorv1alpha1.TemplateAutoscalingStatus{{Name: "z1", Desired: 2}}}
	other := autoNode("other", "p-other")
	other.Spec.Cluster = "elsewhere"
	reading := &capacityReading{
		zones:  []states.ZoneCapacity{{Zone: "zone-1", Free: 130 << 30}},
		byPeer: map[string]states.PeerCapacity{"p-a": {Total: 200 << 30, Free: 30 << 30, Allocated: 170 << 30}, "p-b": {Total: 200 << 30, Free: 100 << 30, Allocated: 100 << 30}},
	}
	in := autoscaleInput(c, states.ClusterReady, reading, objects.BrickCounts{"p-a": 3, "p-other": 9}, []*operatorv1alpha1.GlusterNode{autoNode("a", "p-a"), autoNode("b", "p-b"), other}, states.ClusterSnapshot{VolumesUnhealthy: 1})
	if !in.ScaleUp || in.ScaleDown || in.Cooldown != 5*time.Minute || !in.LastScale.Equal(last.Time) || !in.CapacityKnown || in.VolumesUnhealthy != 1 {
		t.Errorf("knobs %+v", in)
	}
	if len(in.Templates) != 1 || len(in.Nodes) != 2 {
		t.Fatalf("templates %+v nodes %+v, want one template and the cluster's two nodes", in.Templates, in.Nodes)
	}
	tm := in.Templates[0]
	if tm.MinNodes != 1 || tm.MaxNodes != 3 || *tm.FreeStorageMin != 40<<30 || *tm.FreeStorageMax != 150<<30 || *tm.MaxStorage != 1<<40 ||
		tm.NodeRaw != 200<<30 || tm.Recorded == nil || *tm.Recorded != 2 || in.ZoneFree["zone-1"] != 130<<30 {
		t.Errorf("template %+v", tm)
	}
	if len(tm.Nodes) != 2 || tm.Free() != 130<<30 || tm.Nodes[0].Allocated != 170<<30 || tm.Nodes[0].Bricks != 3 || tm.Nodes[1].Bricks != 0 {
		t.Errorf("template nodes %+v", tm.Nodes)
	}

	// Defaults, when spec.autoscaling is unset; no reading, no capacity.
	c.Spec.Autoscaling = nil
	in = autoscaleInput(c, states.ClusterReady, nil, nil, nil, states.ClusterSnapshot{})
	if !in.ScaleUp || !in.ScaleDown || in.Cooldown != DefaultAutoscaleCooldown || in.CapacityKnown {
		t.Errorf("defaults %+v", in)
	}
	// A deleted cluster takes no step.
	c.DeletionTimestamp = &last
	if in := autoscaleInput(c, states.ClusterReady, nil, nil, nil, states.ClusterSnapshot{}); in.Phase != states.ClusterDeleting {
		t.Errorf("phase of a deleted cluster %s", in.Phase)
	}
}

// A step moves lastScaleTime to now; any other decision keeps it. A
// template's free keeps its last reading while GD2 does not answer.
func TestAutoscalingStatusRecordsTheStepAndKeepsTheLastReading(t *testing.T) {
	last := metav1.NewTime(autoT0.Add(-time.Hour))
	free := fixtures.Quantity("30Gi")
	prev := &operatorv1alpha1.AutoscalingStatus{LastScaleTime: &last, Templates: []operatorv1alpha1.TemplateAutoscalingStatus{{Name: "z1", Desired: 1, Free: &free}}}
	step := states.AutoscaleDecision{Stepped: 0, Reason: states.ReasonScalingUp, Message: "up",
		Templates: []states.AutoscaleTemplateDecision{{Name: "z1", Desired: 2, Free: 10 << 30, Reason: states.ReasonScalingUp, Message: "up"}}}
	got := autoscalingStatus(prev, step, autoT0, true)
	if !got.LastScaleTime.Time.Equal(autoT0) || got.Templates[0].Desired != 2 || got.Templates[0].Free.Value() != 10<<30 || got.Reason != states.ReasonScalingUp {
		t.Errorf("after a step: %+v", got)
	}
	hold := states.AutoscaleDecision{Stepped: -1, Reason: states.ReasonCapacityUnknown, Message: "unknown",
		Templates: []states.AutoscaleTemplateDecision{{Name: "z1", Desired: 1, Reason: states.ReasonCapacityUnknown, Message: "unknown"}}}
	got = autoscalingStatus(prev, hold, autoT0, false)
	if !got.LastScaleTime.Equal(&last) || got.Templates[0].Free == nil || got.Templates[0].Free.Cmp(free) != 0 {
		t.Errorf("after a hold without a reading: %+v", got)
	}
}

// The Autoscaling condition is True for a step, False with the reason for
// none, and absent outside automatic mode.
func TestAutoscalingCondition(t *testing.T) {
	c := autoCluster()
	for _, tc := range []struct {
		reason string
		want   metav1.ConditionStatus
	}{
		{states.ReasonScalingUp, metav1.ConditionTrue},
		{states.ReasonScalingDown, metav1.ConditionTrue},
		{states.ReasonCooldownActive, metav1.ConditionFalse},
		{states.ReasonWithinBand, metav1.ConditionFalse},
	} {
		setAutoscalingCondition(c, &operatorv1alpha1.AutoscalingStatus{Reason: tc.reason, Message: "m"})
		got := apimeta.FindStatusCondition(c.Status.Conditions, ConditionAutoscaling)
		if got == nil || got.Status != tc.want || got.Reason != tc.reason || got.Message != "m" {
			t.Errorf("reason %s: condition %+v, want %s", tc.reason, got, tc.want)
		}
	}
	setAutoscalingCondition(c, nil)
	if got := apimeta.FindStatusCondition(c.Status.Conditions, ConditionAutoscaling); got != nil {
		t.Errorf("condition outside automatic mode: %+v", got)
	}
}

// The counts the autoscaler records are what the scale path carries out:
// objects.TemplateFacts reads them back in automatic mode only.
func TestRecordedCountsAreTheTemplateTargets(t *testing.T) {
	c := autoCluster()
	c.Status.Autoscaling = &operatorv1alpha1.AutoscalingStatus{Templates: []operatorv1alpha1.TemplateAutoscalingStatus{{Name: "z1", Desired: 3}}}
	if got := states.TemplateTargets(objects.TemplateFacts(c), true); got[0] != 3 {
		t.Errorf("automatic target %v, want the recorded 3", got)
	}
	c.Spec.Mode = operatorv1alpha1.ClusterModeManual
	c.Spec.NodeTemplates[0].Nodes, c.Spec.NodeTemplates[0].MinNodes, c.Spec.NodeTemplates[0].MaxNodes = ptr.To[int32](1), nil, nil
	if got := states.DesiredNodes(objects.TemplateFacts(c)); got != 1 {
		t.Errorf("manual desired %d, want the fixed 1 whatever was recorded", got)
	}
}
