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
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
	listers "github.com/gluster/anthill/kube/client/listers/operator/v1alpha1"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/machines/gather"
	"github.com/gluster/anthill/kube/machines/record"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
	"github.com/gluster/anthill/transitions"
)

// The phases the runner finds on the syncer, said at compile time
// (SurfacesUnknown through record.OnCluster: an unknown state sets the
// cluster's Degraded condition).
var (
	_ engine.MachineSyncer[*operatorv1alpha1.GlusterCluster, *disruptionFacts] = (*Syncer)(nil)
	_ engine.Prepares[*operatorv1alpha1.GlusterCluster]                        = (*Syncer)(nil)
	_ engine.ReadsLive[*operatorv1alpha1.GlusterCluster, *disruptionFacts]     = (*Syncer)(nil)
	_ engine.SurfacesUnknown[*operatorv1alpha1.GlusterCluster]                 = (*Syncer)(nil)
	_ engine.Finishes[*operatorv1alpha1.GlusterCluster, *disruptionFacts]      = (*Syncer)(nil)
)

var disruptionDef = states.DisruptionDefinition()

// Syncer runs the disruption machine of one GlusterCluster per
// sync (key: disruption, namespace, cluster). It reads the Gluster pods and
// the budgets live (an eviction is admitted by the API server between two
// informer deliveries), the GlusterNodes and Kubernetes Nodes from
// listers, the volumes and peers from GD2, and heal-info live for the one
// zone it might open; then it fires at most one transition, or repairs the
// budgets, or waits.
type Syncer struct {
	Clusters  listers.GlusterClusterLister
	Nodes     listers.GlusterNodeLister
	KubeNodes corev1listers.NodeLister
	// Client reads pods and budgets live.
	Client  kubernetes.Interface
	Anthill versioned.Interface
	Kube    transitions.DisruptionKube
	// Audit logs every configuration-altering call of the actions.
	Audit effects.Audit
	GD2   *effects.GD2Clients
	Log   *engine.TransitionLog
	Clock clock.Clock

	record.OnCluster[*disruptionFacts]
}

// disruptionView is what one sync gathered: the snapshot, and the pod
// coverage and zones a budget action needs.
type disruptionView struct {
	snap  states.DisruptionSnapshot
	zones []string
	pods  []transitions.PodCoverage
}

// target is the budget set for a machine in state with zone.
func (v disruptionView) target(c *operatorv1alpha1.GlusterCluster, state fsm.State, zone string) transitions.DisruptionTarget {
	t := transitions.DisruptionTarget{Namespace: c.Namespace, Cluster: c.Name, Zones: v.zones, Pods: v.pods}
	if state == states.DisruptionOpen {
		t.OpenZone = zone
	}
	return t
}

// Sync runs one decision of the disruption machine of the cluster in key.
func (s *Syncer) Sync(ctx context.Context, key engine.Key) (engine.Result, error) {
	return s.SyncWith(ctx, key, s, s.Anthill, s.Log, s.Clock, disruptionFields)
}

// disruptionFields are the status fields the disruption machine alone
// writes: status.disruption (beside its conditions and history records).
func disruptionFields(st *operatorv1alpha1.GlusterClusterStatus) []any {
	return []any{&st.Disruption}
}

// disruptionFacts is what one disruption sync gathered.
type disruptionFacts struct {
	view disruptionView
	// zone is the persisted zone, since when the machine is in its state.
	zone  string
	since time.Time
	// liveRead: the GD2 lists were read live, not from the cluster's
	// shared view, because the decision on the view acted.
	liveRead bool
}

// decidedZone is the zone the decision over f names.
func (f *disruptionFacts) decidedZone() string { return states.DecideDisruption(f.view.snap).Zone }

// Definition is the disruption machine.
func (s *Syncer) Definition() *fsm.Definition { return disruptionDef }

// Get reads the cluster from the cache.
func (s *Syncer) Get(key engine.Key) (*operatorv1alpha1.GlusterCluster, error) {
	return s.Clusters.GlusterClusters(key.Namespace).Get(key.Name)
}

// Prepare stops the machine where there is nothing to protect: an
// external pool has no pods, a cluster being deleted has its budgets
// removed by the cluster machine, and a cluster not provisioned yet (or
// any more) has no servers.
func (s *Syncer) Prepare(_ context.Context, c *operatorv1alpha1.GlusterCluster) (bool, engine.Result, error) {
	if c.Spec.Mode == operatorv1alpha1.ClusterModeExternal || c.DeletionTimestamp != nil {
		return true, engine.Result{}, nil
	}
	switch fsm.State(c.Status.Phase) {
	case "", states.ClusterPending, states.ClusterDeleting, states.ClusterDeleted:
		return true, engine.Result{}, nil
	}
	return false, engine.Result{}, nil
}

// Instances is the disruption machine's one instance, at the state and
// zone in status.disruption.
func (s *Syncer) Instances(_ context.Context, c *operatorv1alpha1.GlusterCluster) ([]engine.Instance[*disruptionFacts], error) {
	in := engine.Instance[*disruptionFacts]{Facts: &disruptionFacts{}}
	if st := c.Status.Disruption; st != nil {
		in.State, in.Facts.zone = fsm.State(st.State), st.Zone
		if st.LastTransitionTime != nil {
			in.Facts.since = st.LastTransitionTime.Time
		}
	}
	return []engine.Instance[*disruptionFacts]{in}, nil
}

// Gather reads the disruption facts: the pods and budgets (live), the
// nodes and GD2 from the cluster's shared view.
func (s *Syncer) Gather(ctx context.Context, c *operatorv1alpha1.GlusterCluster, in *engine.Instance[*disruptionFacts]) error {
	var err error
	in.Facts.view, err = s.gather(ctx, c, in.State, in.Facts.zone, in.Facts.since, false)
	return err
}

// GatherLive reads the facts again with GD2's lists read live
// (engine.ReadsLive). The shared view's (effects.PoolViews) are a little
// old (the volumes up to effects.ConfigListFactor intervals): good enough
// to keep a budget, never to change one, so a decision that opens or
// locks a zone, or applies budgets, is taken again on a live read.
func (s *Syncer) GatherLive(ctx context.Context, c *operatorv1alpha1.GlusterCluster, in *engine.Instance[*disruptionFacts], _ states.Decision) error {
	if !in.Facts.view.snap.GD2Reachable {
		return nil
	}
	view, err := s.gather(ctx, c, in.State, in.Facts.zone, in.Facts.since, true)
	if err != nil {
		return err
	}
	in.Facts.view, in.Facts.liveRead = view, true
	return nil
}

// Decide is the disruption machine's pure decision (the zone it names is
// the facts' decidedZone).
func (s *Syncer) Decide(in engine.Instance[*disruptionFacts]) states.Decision {
	return states.DecideDisruption(in.Facts.view.snap).Decision
}

// Act applies the budgets: an event's action those of the state it
// enters, a step's those of the current state.
func (s *Syncer) Act(ctx context.Context, c *operatorv1alpha1.GlusterCluster, in engine.Instance[*disruptionFacts], d states.Decision) error {
	a, ok := transitions.DisruptionActions.For(d)
	if !ok {
		return nil
	}
	f := in.Facts
	t := f.view.target(c, in.State, f.zone)
	if d.Event != "" {
		to, _ := disruptionDef.Target(d.Event, in.State)
		t = f.view.target(c, to, f.decidedZone())
	}
	return a(ctx, s.Audit.Disruption(s.Kube), t)
}

// Message is status.disruption's message.
func (s *Syncer) Message(c *operatorv1alpha1.GlusterCluster, _ string) string {
	if c.Status.Disruption == nil {
		return ""
	}
	return c.Status.Disruption.Message
}

// Record lands the outcome in status.disruption and, for a transition, the
// shared history (the record names the zone).
func (s *Syncer) Record(c *operatorv1alpha1.GlusterCluster, outs []engine.Outcome[*disruptionFacts], now time.Time) {
	out := &outs[0]
	switch out.Kind {
	case engine.Fired:
		out.Committed.Subject = out.Facts.decidedZone()
		c.Status.Disruption = &operatorv1alpha1.DisruptionStatus{
			State: string(out.To), Zone: out.Facts.decidedZone(), LastTransitionTime: &metav1.Time{Time: now}, Message: engine.Truncate(out.Decision.Message, engine.MaxConditionMessage),
		}
		c.Status.History = record.AppendHealHistory(c.Status.History, out.Committed.Record())
	case engine.Waited, engine.Stepped:
		next := operatorv1alpha1.DisruptionStatus{State: string(out.To), Zone: out.Facts.zone, Message: engine.Truncate(out.Decision.Message, engine.MaxConditionMessage)}
		if old := c.Status.Disruption; old != nil {
			next.LastTransitionTime = old.LastTransitionTime
		}
		c.Status.Disruption = &next
	}
}

// Finish looks again after pollWait at the latest while the machine
// waits. A failed status write after budgets were applied is harmless: the
// budgets then match the new state, at least as protective as the decision
// wanted, and the next sync decides again and repairs them if needed.
func (s *Syncer) Finish(_ context.Context, _ *operatorv1alpha1.GlusterCluster, outs []engine.Outcome[*disruptionFacts], res engine.Result, err error) (engine.Result, error) {
	if k := outs[0].Kind; (k == engine.Waited || k == engine.Stepped) && res.RequeueAfter == 0 {
		res.RequeueAfter = record.PollWait
	}
	return res, err
}

// gather builds the snapshot. GD2 failing is not an error (the decision
// locks); failing Kubernetes reads are.
func (s *Syncer) gather(ctx context.Context, c *operatorv1alpha1.GlusterCluster, state fsm.State, zone string, since time.Time, live bool) (disruptionView, error) {
	view := disruptionView{snap: states.DisruptionSnapshot{State: state, Zone: zone, Now: s.Clock.Now()}}
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
	if gerr == nil && state != states.DisruptionOpen {
		if cand := states.DisruptionCandidate(view.snap); cand != "" && s.worthReading(view.snap, cand) {
			i := slices.IndexFunc(view.snap.Zones, func(z states.DisruptionZone) bool { return z.Name == cand })
			view.snap.Zones[i].HealNotClean, view.snap.Zones[i].HealChecked = s.readHeal(ctx, g, cand)
		}
	}
	current := view.target(c, state, zone)
	if state == states.DisruptionOpen && !slices.Contains(view.zones, zone) {
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
	case state == states.DisruptionOpen && !since.IsZero() && pod.CreationTimestamp.After(since):
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
