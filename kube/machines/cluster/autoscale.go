package cluster

import (
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"github.com/gluster/anthill/fsm"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

// Autoscaling defaults, for spec.autoscaling unset or partly set.
const (
	// DefaultAutoscaleCooldown is the least time between two autoscaler
	// steps.
	DefaultAutoscaleCooldown = 10 * time.Minute
)

// ConditionAutoscaling on an automatic-mode GlusterCluster says what the
// autoscaler last decided: True with reason ScalingUp or ScalingDown in
// the sync that takes a step, False with the reason no step is taken
// otherwise (WithinBand, CooldownActive, NodesNotSettled, ...). It is
// absent in the other modes.
const ConditionAutoscaling = "Autoscaling"

// autoscale runs the autoscaler of an automatic-mode cluster over this
// sync's facts (states.Autoscale) and sets what it decided: the
// snapshot's desired node count, which the cluster machine's scale and
// scaleNodes carry out, and the status.autoscaling that Record writes. In
// the other modes it clears status.autoscaling. reading is nil when GD2
// did not answer.
func (s *Syncer) autoscale(c *operatorv1alpha1.GlusterCluster, phase fsm.State, reading *capacityReading, f *clusterFacts) error {
	if c.Spec.Mode != operatorv1alpha1.ClusterModeAutomatic {
		return nil
	}
	all, err := s.Nodes.GlusterNodes(c.Namespace).List(labels.Everything())
	if err != nil {
		return err
	}
	in := autoscaleInput(c, phase, reading, f.bricks, all, f.snap)
	in.Now = s.Clock.Now()
	d := states.Autoscale(in)
	f.autoscale = d
	f.snap.DesiredNodes = d.Desired()
	if d.Stepped >= 0 {
		f.snap.AutoscaleReason, f.snap.AutoscaleMessage = d.Reason, d.Message
	}
	f.autoscaling = autoscalingStatus(c.Status.Autoscaling, d, in.Now, reading != nil)
	return nil
}

// autoscaleInput gathers the autoscaler's facts from the spec, the
// recorded status, the cluster's GlusterNodes, one capacity reading and
// the brick counts the scale-down order goes by.
func autoscaleInput(c *operatorv1alpha1.GlusterCluster, phase fsm.State, reading *capacityReading, bricks objects.BrickCounts, all []*operatorv1alpha1.GlusterNode, snap states.ClusterSnapshot) states.AutoscaleInput {
	in := states.AutoscaleInput{
		ZoneFree: map[string]uint64{}, CapacityKnown: reading != nil,
		ScaleUp: true, ScaleDown: true, Cooldown: DefaultAutoscaleCooldown,
		Paused: c.Spec.Paused, Phase: phase, UpgradeActive: snap.UpgradeActive, VolumesUnhealthy: snap.VolumesUnhealthy,
	}
	if c.DeletionTimestamp != nil {
		in.Phase = states.ClusterDeleting
	}
	if a := c.Spec.Autoscaling; a != nil {
		in.ScaleUp, in.ScaleDown = ptr.Deref(a.ScaleUp, true), ptr.Deref(a.ScaleDown, true)
		if a.Cooldown != nil {
			in.Cooldown = a.Cooldown.Duration
		}
	}
	recorded := map[string]int{}
	if st := c.Status.Autoscaling; st != nil {
		if st.LastScaleTime != nil {
			in.LastScale = st.LastScaleTime.Time
		}
		for _, t := range st.Templates {
			recorded[t.Name] = int(t.Desired)
		}
	}
	if reading != nil {
		for _, z := range reading.zones {
			in.ZoneFree[z.Zone] = z.Free
		}
	}
	byTemplate := map[string][]states.AutoscaleNode{}
	for _, n := range all {
		if n.Spec.Cluster != c.Name {
			continue
		}
		nf := objects.NodeFacts(n)
		nf.Bricks = bricks.Of(n)
		in.Nodes = append(in.Nodes, nf)
		if !states.NodeCounts(nf) {
			continue
		}
		an := states.AutoscaleNode{NodeFacts: nf}
		if reading != nil {
			pc := reading.byPeer[n.Status.PeerID]
			an.Free, an.Allocated = pc.Free, pc.Allocated
		}
		byTemplate[n.Spec.Template] = append(byTemplate[n.Spec.Template], an)
	}
	for _, t := range c.Spec.NodeTemplates {
		at := states.AutoscaleTemplate{
			Name: t.Name, Zone: t.Zone, MinNodes: int(ptr.Deref(t.MinNodes, 0)), MaxNodes: int(ptr.Deref(t.MaxNodes, 0)),
			MaxStorage: quantityBytes(t.MaxStorage), FreeStorageMin: quantityBytes(t.FreeStorageMin), FreeStorageMax: quantityBytes(t.FreeStorageMax),
			NodeRaw: uint64(max(t.Storage.Capacity.Value(), 0)) * uint64(max(t.Storage.DeviceCount, 1)),
			Nodes:   byTemplate[t.Name],
		}
		if n, ok := recorded[t.Name]; ok {
			at.Recorded = ptr.To(n)
		}
		in.Templates = append(in.Templates, at)
	}
	return in
}

// quantityBytes is a quantity in bytes, nil for nil (negative: 0).
func quantityBytes(q *resource.Quantity) *uint64 {
	if q == nil {
		return nil
	}
	return ptr.To(uint64(max(q.Value(), 0)))
}

// autoscalingStatus is status.autoscaling for decision d. lastScaleTime
// moves to now only when d takes a step; a template's free keeps its last
// reading while GD2 does not answer.
func autoscalingStatus(prev *operatorv1alpha1.AutoscalingStatus, d states.AutoscaleDecision, now time.Time, measured bool) *operatorv1alpha1.AutoscalingStatus {
	out := &operatorv1alpha1.AutoscalingStatus{
		Reason:  d.Reason,
		Message: engine.Truncate(d.Message, engine.MaxConditionMessage),
	}
	prevFree := map[string]*resource.Quantity{}
	if prev != nil {
		out.LastScaleTime = prev.LastScaleTime
		for _, t := range prev.Templates {
			prevFree[t.Name] = t.Free
		}
	}
	if d.Stepped >= 0 {
		out.LastScaleTime = &metav1.Time{Time: now}
	}
	for _, t := range d.Templates {
		ts := operatorv1alpha1.TemplateAutoscalingStatus{
			Name: t.Name, Desired: int32(t.Desired), Reason: t.Reason,
			Message: engine.Truncate(t.Message, engine.MaxConditionMessage), Free: prevFree[t.Name],
		}
		if measured {
			ts.Free = resource.NewQuantity(int64(t.Free), resource.BinarySI)
		}
		out.Templates = append(out.Templates, ts)
	}
	return out
}

// setAutoscalingCondition sets the Autoscaling condition from the
// autoscaler's decision, or removes it when there is none (not automatic
// mode).
func setAutoscalingCondition(c *operatorv1alpha1.GlusterCluster, a *operatorv1alpha1.AutoscalingStatus) {
	if a == nil {
		apimeta.RemoveStatusCondition(&c.Status.Conditions, ConditionAutoscaling)
		return
	}
	status := metav1.ConditionFalse
	if a.Reason == states.ReasonScalingUp || a.Reason == states.ReasonScalingDown {
		status = metav1.ConditionTrue
	}
	apimeta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{
		Type: ConditionAutoscaling, Status: status, Reason: a.Reason, Message: a.Message, ObservedGeneration: c.Generation,
	})
}
