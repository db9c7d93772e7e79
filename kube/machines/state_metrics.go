package machines

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/labels"
	corev1listers "k8s.io/client-go/listers/core/v1"

	"github.com/gluster/anthill/fsm"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	listers "github.com/gluster/anthill/kube/client/listers/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

// The definitions whose states the collector counts.
var (
	nodeDef    = states.NodeDefinition()
	healDef    = states.HealDefinition()
	upgradeDef = states.UpgradeDefinition()
)

// StateCollector exports what the machines' statuses say, computed at
// scrape time from the informer caches: the persisted status is the one
// source, so the gauges can never disagree with `kubectl get` and need no
// bookkeeping when an object goes away. Labels are bounded by the objects
// that exist and the states the definitions name.
type StateCollector struct {
	Nodes    listers.GlusterNodeLister
	Clusters listers.GlusterClusterLister
	// Pods, when set, gives each node's uptime: when the glusterd2
	// container of its pod last started (nil: no uptime series).
	Pods corev1listers.PodLister

	nodes, nodeState, nodeSince, nodeDownSince  *prometheus.Desc
	nodeUpSince                                 *prometheus.Desc
	volumes, volumeState, volumePending         *prometheus.Desc
	volumeSplitBrain, volumeSince, volumeBricks *prometheus.Desc
	clusterPhase, upgradeState, disruption      *prometheus.Desc
	capTotal, capFree, zoneTotal, zoneFree      *prometheus.Desc
}

// NewStateCollector builds the collector over the two listers.
func NewStateCollector(nodes listers.GlusterNodeLister, clusters listers.GlusterClusterLister) *StateCollector {
	cl := []string{"namespace", "cluster"}
	d := func(name, help string, extra ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, append(append([]string(nil), cl...), extra...), nil)
	}
	return &StateCollector{
		Nodes: nodes, Clusters: clusters,
		nodes:            d("anthill_cluster_nodes", "GlusterNodes of the cluster in each node state (every state of the node machine, zeros included).", "state"),
		nodeState:        d("anthill_node_state", "1 for the state a GlusterNode is in (one series per node).", "node", "zone", "state"),
		nodeSince:        d("anthill_node_state_since_timestamp_seconds", "When the GlusterNode entered its state (Unix time); time in state is time() minus this.", "node"),
		nodeDownSince:    d("anthill_node_down_since_timestamp_seconds", "When the node's GD2 peer was first seen not alive in its current outage (Unix time); absent while it is alive.", "node"),
		nodeUpSince:      d("anthill_node_up_since_timestamp_seconds", "When the glusterd2 container of the node's pod last started (Unix time); uptime is time() minus this. Absent while it is not running and for nodes without a pod (external mode).", "node"),
		volumes:          d("anthill_cluster_volumes", "Volumes of the cluster in each heal state (every state of the heal machine, zeros included).", "state"),
		volumeState:      d("anthill_volume_heal_state", "1 for the heal state a volume is in (one series per volume).", "volume", "state"),
		volumePending:    d("anthill_volume_heal_pending_entries", "Entries GD2's heal-info reports pending heal on the volume, as last read.", "volume"),
		volumeSplitBrain: d("anthill_volume_split_brain_entries", "Entries GD2's heal-info reports in split-brain on the volume, as last read.", "volume"),
		volumeBricks:     d("anthill_volume_bricks", "Bricks of the volume's replica sets by state (online, offline), as the last heal-info reading found them; replicated volumes only.", "volume", "state"),
		volumeSince:      d("anthill_volume_heal_state_since_timestamp_seconds", "When the volume entered its heal state (Unix time).", "volume"),
		clusterPhase:     d("anthill_cluster_phase", "1 for the phase the GlusterCluster is in.", "phase"),
		upgradeState:     d("anthill_upgrade_state", "1 for the state of the cluster's upgrade machine.", "state"),
		disruption:       d("anthill_disruption_state", "1 for the state of the cluster's disruption machine; zone is the zone open for evictions, if any.", "state", "zone"),
		capTotal:         d("anthill_cluster_capacity_total_bytes", "Raw capacity of the cluster's registered devices, as last read from GD2."),
		capFree:          d("anthill_cluster_capacity_free_bytes", "Free raw capacity of the cluster's registered devices, as last read from GD2."),
		zoneTotal:        d("anthill_zone_capacity_total_bytes", "Raw capacity of the registered devices in one zone.", "zone"),
		zoneFree:         d("anthill_zone_capacity_free_bytes", "Free raw capacity of the registered devices in one zone.", "zone"),
	}
}

// Describe sends every metric's description.
func (c *StateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		c.nodes, c.nodeState, c.nodeSince, c.nodeDownSince, c.nodeUpSince, c.volumes, c.volumeState, c.volumePending,
		c.volumeSplitBrain, c.volumeSince, c.volumeBricks, c.clusterPhase, c.upgradeState, c.disruption,
		c.capTotal, c.capFree, c.zoneTotal, c.zoneFree,
	} {
		ch <- d
	}
}

// Collect reads the caches and sends the current values.
func (c *StateCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, lv ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, lv...)
	}
	type clusterKey struct{ ns, name string }
	byCluster := map[clusterKey]map[string]int{}
	nodes, err := c.Nodes.List(labels.Everything())
	if err != nil {
		return
	}
	for _, n := range nodes {
		k := clusterKey{n.Namespace, n.Spec.Cluster}
		st := n.Status.State
		if st == "" {
			st = string(nodeDef.Initial)
		}
		if byCluster[k] == nil {
			byCluster[k] = map[string]int{}
		}
		byCluster[k][st]++
		gauge(c.nodeState, 1, n.Namespace, n.Spec.Cluster, n.Name, n.Spec.Zone, st)
		if t := n.Status.LastTransitionTime; t != nil {
			gauge(c.nodeSince, float64(t.Unix()), n.Namespace, n.Spec.Cluster, n.Name)
		}
		if t := n.Status.DownSince; t != nil {
			gauge(c.nodeDownSince, float64(t.Unix()), n.Namespace, n.Spec.Cluster, n.Name)
		}
		if t, ok := c.gd2StartedAt(n); ok {
			gauge(c.nodeUpSince, float64(t.Unix()), n.Namespace, n.Spec.Cluster, n.Name)
		}
	}
	clusters, err := c.Clusters.List(labels.Everything())
	if err != nil {
		return
	}
	for _, cl := range clusters {
		k := clusterKey{cl.Namespace, cl.Name}
		c.collectStateCounts(ch, c.nodes, nodeDef, k.ns, k.name, byCluster[k])
		delete(byCluster, k)
		c.collectCluster(gauge, ch, cl)
	}
	// Nodes whose cluster is gone (or not yet in the cache) still count.
	for k, counts := range byCluster {
		c.collectStateCounts(ch, c.nodes, nodeDef, k.ns, k.name, counts)
	}
}

// collectStateCounts sends one series per state of def, zeros included, so
// a state a machine left drops to 0 instead of vanishing; states the
// definition does not know (an operator downgrade) are sent as they are.
func (c *StateCollector) collectStateCounts(ch chan<- prometheus.Metric, d *prometheus.Desc, def *fsm.Definition, ns, cluster string, counts map[string]int) {
	seen := map[string]bool{}
	for _, s := range def.States {
		seen[string(s.Name)] = true
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(counts[string(s.Name)]), ns, cluster, string(s.Name))
	}
	for s, n := range counts {
		if !seen[s] {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(n), ns, cluster, s)
		}
	}
}

func (c *StateCollector) collectCluster(gauge func(*prometheus.Desc, float64, ...string), ch chan<- prometheus.Metric, cl *operatorv1alpha1.GlusterCluster) {
	ns, name, st := cl.Namespace, cl.Name, &cl.Status
	heal := map[string]int{}
	for _, v := range st.Volumes {
		s := v.State
		if s == "" {
			s = string(healDef.Initial)
		}
		heal[s]++
		gauge(c.volumeState, 1, ns, name, v.Name, s)
		gauge(c.volumePending, float64(v.PendingEntries), ns, name, v.Name)
		gauge(c.volumeSplitBrain, float64(v.SplitBrainEntries), ns, name, v.Name)
		if v.Bricks > 0 {
			gauge(c.volumeBricks, float64(v.BricksOnline), ns, name, v.Name, "online")
			gauge(c.volumeBricks, float64(v.Bricks-v.BricksOnline), ns, name, v.Name, "offline")
		}
		if t := v.LastTransitionTime; t != nil {
			gauge(c.volumeSince, float64(t.Unix()), ns, name, v.Name)
		}
	}
	c.collectStateCounts(ch, c.volumes, healDef, ns, name, heal)
	if st.Phase != "" {
		gauge(c.clusterPhase, 1, ns, name, string(st.Phase))
	}
	up := string(upgradeDef.Initial)
	if st.Upgrade != nil && st.Upgrade.State != "" {
		up = st.Upgrade.State
	}
	gauge(c.upgradeState, 1, ns, name, up)
	if d := st.Disruption; d != nil && d.State != "" {
		gauge(c.disruption, 1, ns, name, d.State, d.Zone)
	}
	if cp := st.Capacity; cp != nil {
		if cp.Total != nil {
			gauge(c.capTotal, cp.Total.AsApproximateFloat64(), ns, name)
		}
		if cp.Free != nil {
			gauge(c.capFree, cp.Free.AsApproximateFloat64(), ns, name)
		}
		for _, z := range cp.Zones {
			gauge(c.zoneTotal, z.Total.AsApproximateFloat64(), ns, name, z.Zone)
			gauge(c.zoneFree, z.Free.AsApproximateFloat64(), ns, name, z.Zone)
		}
	}
}

// gd2StartedAt is when the glusterd2 container of n's pod started, as the
// kubelet reports it: a container restart (GD2 crashed, or was killed)
// and a new pod both move it, so it is the GD2 process's uptime, the
// counterpart of anthill_node_down_since_timestamp_seconds, which says
// since when its peer is not alive.
func (c *StateCollector) gd2StartedAt(n *operatorv1alpha1.GlusterNode) (time.Time, bool) {
	if c.Pods == nil {
		return time.Time{}, false
	}
	pod, err := c.Pods.Pods(n.Namespace).Get(objects.NodePodName(n.Name))
	if err != nil {
		return time.Time{}, false
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == objects.ContainerGD2 && cs.State.Running != nil && !cs.State.Running.StartedAt.IsZero() {
			return cs.State.Running.StartedAt.Time, true
		}
	}
	return time.Time{}, false
}
