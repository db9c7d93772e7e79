package disruption

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/machines/gather"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
	"github.com/gluster/anthill/transitions"
)

// gather builds the snapshot. GD2 failing is not an error (the decision
// locks); failing Kubernetes reads are.
func (s *Syncer) gather(ctx context.Context, c *operatorv1alpha1.GlusterCluster, state fsm.State, zone string, since time.Time, live bool) (disruptionView, error) {
	view := disruptionView{snap: states.DisruptionSnapshot{State: state, Zone: zone, Now: s.Clock.Now(), Off: objects.AutomationOff(c)}}
	all, err := s.Nodes.GlusterNodes(c.Namespace).List(labels.Everything())
	if err != nil {
		return view, err
	}
	var nodes []*operatorv1alpha1.GlusterNode
	zoneSet := map[string]bool{}
	for _, t := range c.Spec.NodeTemplates {
		zoneSet[t.Zone] = true
	}
	for _, n := range all {
		if n.Spec.Cluster == c.Name {
			nodes = append(nodes, n)
			zoneSet[n.Spec.Zone] = true
		}
	}
	delete(zoneSet, "")
	for z := range zoneSet {
		view.zones = append(view.zones, z)
	}
	slices.Sort(view.zones)

	podList, err := s.Client.CoreV1().Pods(c.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(objects.ClusterSelectorLabels(c.Name, objects.ComponentGlusterNode)).String(),
	})
	if err != nil {
		return view, fmt.Errorf("list Gluster pods of %s/%s: %w", c.Namespace, c.Name, err)
	}
	pods := map[string]*corev1.Pod{} // by pod name
	for i := range podList.Items {
		pods[podList.Items[i].Name] = &podList.Items[i]
	}
	pdbList, err := s.Client.PolicyV1().PodDisruptionBudgets(c.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(objects.BudgetLabels(c.Name, "")).String(),
	})
	if err != nil {
		return view, fmt.Errorf("list PodDisruptionBudgets of %s/%s: %w", c.Namespace, c.Name, err)
	}
	var pdbs []policyv1.PodDisruptionBudget
	for _, p := range pdbList.Items {
		if _, ok := p.Labels[objects.LabelZone]; ok {
			pdbs = append(pdbs, p)
		}
	}

	// GD2: which node holds bricks, and which volumes have a brick in
	// which zone.
	g, gerr := s.readGD2(ctx, c, nodes, live)
	view.snap.GD2Reachable = gerr == nil
	healthy := map[string]bool{}
	for _, v := range c.Status.Volumes {
		healthy[v.Name] = v.State == string(states.HealHealthy)
	}

	zones := map[string]*states.DisruptionZone{}
	for _, z := range view.zones {
		zones[z] = &states.DisruptionZone{Name: z}
	}
	for _, n := range nodes {
		pod := pods[objects.NodePodName(n.Name)]
		if n.Spec.ExternalAddress == "" && pod != nil {
			cov := transitions.PodCoverage{Pod: pod.Name, Zone: n.Spec.Zone}
			if gerr == nil {
				holds := g.bricks[n.Name] > 0
				cov.HoldsBricks = &holds
			}
			view.pods = append(view.pods, cov)
		}
		z := zones[n.Spec.Zone]
		if z == nil || gerr != nil || g.bricks[n.Name] == 0 {
			continue
		}
		z.BrickNodes++
		z.Disrupted = append(z.Disrupted, s.nodeTrouble(n, pod, g, state, since)...)
		if pod != nil && s.drainRequested(pod) {
			z.DrainRequested = true
		}
	}
	if gerr == nil {
		for _, v := range g.vols {
			for z := range g.volZones[v.Name] {
				if zones[z] != nil && !healthy[v.Name] {
					zones[z].UnhealthyVolumes = append(zones[z].UnhealthyVolumes, v.Name)
				}
			}
		}
	}
	for _, p := range pdbs {
		if z := zones[p.Labels[objects.LabelZone]]; z != nil {
			z.EvictionsInFlight += len(p.Status.DisruptedPods)
		}
	}
	for _, name := range view.zones {
		z := zones[name]
		slices.Sort(z.UnhealthyVolumes)
		view.snap.Zones = append(view.snap.Zones, *z)
	}
	// The live heal-info read, only for the zone the machine might open
	// and only when nothing else already blocks it.
	if gerr == nil && !states.DisruptionMeaning(state).ZoneOpen {
		if cand := states.DisruptionCandidate(view.snap); cand != "" && s.worthReading(view.snap, cand) {
			i := slices.IndexFunc(view.snap.Zones, func(z states.DisruptionZone) bool { return z.Name == cand })
			view.snap.Zones[i].HealNotClean, view.snap.Zones[i].HealChecked = s.readHeal(ctx, g, cand)
		}
	}
	current := view.target(c, state, zone)
	if states.DisruptionMeaning(state).ZoneOpen && !slices.Contains(view.zones, zone) {
		current.OpenZone = "" // the decision locks; never "repair" towards a vanished zone
	}
	view.snap.BudgetsInSync = objects.BudgetsInSync(current, pdbs, pods)
	return view, nil
}

// worthReading: heal-info matters only if nothing else blocks opening cand.
func (s *Syncer) worthReading(snap states.DisruptionSnapshot, cand string) bool {
	for _, z := range snap.Zones {
		if len(z.Disrupted) > 0 || z.EvictionsInFlight > 0 || (z.Name == cand && len(z.UnhealthyVolumes) > 0) {
			return false
		}
	}
	return true
}

// nodeTrouble describes why a node holding bricks counts as disrupted.
func (s *Syncer) nodeTrouble(n *operatorv1alpha1.GlusterNode, pod *corev1.Pod, g gd2View, state fsm.State, since time.Time) []string {
	var out []string
	if st := fsm.State(n.Status.State); st != states.NodeOnline {
		out = append(out, fmt.Sprintf("node %s is %s", n.Name, cmp.Or(string(st), "new")))
	}
	if id := g.peerOf[n.Name]; id != "" && !g.alive[id] {
		out = append(out, fmt.Sprintf("the GD2 peer of node %s is not alive", n.Name))
	}
	if n.Spec.ExternalAddress != "" {
		return out
	}
	switch {
	case pod == nil:
		out = append(out, fmt.Sprintf("pod %s is missing", objects.NodePodName(n.Name)))
	case pod.DeletionTimestamp != nil:
		out = append(out, fmt.Sprintf("pod %s is being deleted", pod.Name))
	case !objects.PodReady(pod):
		out = append(out, fmt.Sprintf("pod %s is not ready", pod.Name))
	case states.DisruptionMeaning(state).ZoneOpen && !since.IsZero() && pod.CreationTimestamp.After(since):
		// Evicted and already back: the eviction happened while the zone
		// was open, however fast the pod returned.
		out = append(out, fmt.Sprintf("pod %s was recreated after the zone opened", pod.Name))
	}
	return out
}

// drainRequested: the pod's Kubernetes node is cordoned, or carries a
// NoSchedule/NoExecute taint the pod does not tolerate — what kubectl
// drain, the cluster autoscaler and Karpenter do before evicting.
func (s *Syncer) drainRequested(pod *corev1.Pod) bool {
	if pod.Spec.NodeName == "" || s.KubeNodes == nil {
		return false
	}
	node, err := s.KubeNodes.Get(pod.Spec.NodeName)
	if err != nil {
		return false
	}
	return nodeDraining(node, pod)
}

func nodeDraining(node *corev1.Node, pod *corev1.Pod) bool {
	if node.Spec.Unschedulable {
		return true
	}
	for i := range node.Spec.Taints {
		t := &node.Spec.Taints[i]
		if t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		if !slices.ContainsFunc(pod.Spec.Tolerations, func(tol corev1.Toleration) bool { return tol.ToleratesTaint(klog.Background(), t, true) }) {
			return true
		}
	}
	return false
}

// gd2View is what one sync read from GD2.
type gd2View struct {
	client effects.GD2Reader
	vols   []gd2.Volume
	// bricks counts bricks per GlusterNode name.
	bricks map[string]int
	// volZones: per volume, the zones (of GlusterNodes) it has bricks in.
	volZones map[string]map[string]bool
	peerOf   map[string]string // node name -> peer id
	alive    map[string]bool   // peer id -> alive
}

// readGD2 reads the peer and volume lists from the cluster's shared view,
// or from GD2 when live; brick status and heal info are always read live.
func (s *Syncer) readGD2(ctx context.Context, c *operatorv1alpha1.GlusterCluster, nodes []*operatorv1alpha1.GlusterNode, live bool) (gd2View, error) {
	g := gd2View{bricks: map[string]int{}, volZones: map[string]map[string]bool{}, peerOf: map[string]string{}, alive: map[string]bool{}}
	gc, err := s.GD2.For(ctx, c)
	if err != nil {
		return g, err
	}
	g.client = gc
	var lists effects.GD2Reader = gc
	if !live {
		lists = s.GD2.Shared(c, gc)
	}
	peers, err := lists.ListPeers(ctx, gd2.Filter{})
	if err != nil {
		return g, fmt.Errorf("list peers: %w", err)
	}
	vols, err := lists.ListVolumes(ctx, gd2.Filter{})
	if err != nil {
		return g, fmt.Errorf("list volumes: %w", err)
	}
	g.vols = gather.OwnVolumes(c, vols, peers)
	// A peer belongs to a node by the id in the node's status, or by the
	// node key anthill writes into the peer's metadata.
	nodeOfPeer := map[string]*operatorv1alpha1.GlusterNode{}
	byKey := map[string]*operatorv1alpha1.GlusterNode{}
	for _, n := range nodes {
		byKey[n.Namespace+"/"+n.Name] = n
		if n.Status.PeerID != "" {
			nodeOfPeer[n.Status.PeerID] = n
		}
	}
	for _, p := range peers {
		g.alive[p.ID] = p.Online
		if n := byKey[p.Metadata[transitions.MetaNode]]; n != nil && nodeOfPeer[p.ID] == nil {
			nodeOfPeer[p.ID] = n
		}
	}
	for id, n := range nodeOfPeer {
		g.peerOf[n.Name] = id
	}
	for _, v := range g.vols {
		for _, b := range v.Bricks() {
			n := nodeOfPeer[b.PeerID]
			if n == nil {
				continue
			}
			g.bricks[n.Name]++
			if g.volZones[v.Name] == nil {
				g.volZones[v.Name] = map[string]bool{}
			}
			g.volZones[v.Name][n.Spec.Zone] = true
		}
	}
	return g, nil
}

// readHeal reads heal-info of every volume with a brick in zone and lists
// those that are not clean: a replica set with a brick offline, entries
// pending or in split-brain. ok is false when a read failed.
func (s *Syncer) readHeal(ctx context.Context, g gd2View, zone string) (notClean []string, ok bool) {
	var errs int
	for _, v := range g.vols {
		if !g.volZones[v.Name][zone] || !gather.Redundant(v) {
			continue
		}
		vv, err := gather.ReadVolume(ctx, g.client, v)
		if err != nil {
			errs++
			continue
		}
		if !vv.Started {
			notClean = append(notClean, v.Name)
			continue
		}
		if slices.ContainsFunc(vv.Subvols, func(sv states.SubvolFacts) bool { return sv.Replica && !sv.Healthy() }) {
			notClean = append(notClean, v.Name)
		}
	}
	slices.Sort(notClean)
	return notClean, errs == 0
}
