package heal

import (
	"sort"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gluster/anthill/gd2"
	"github.com/gluster/anthill/kube/engine"
)

// VolumeMetrics exports what the heal syncer last read of every volume of
// every cluster: whether it is up, how full it is, and the same per brick.
// Unlike the StateCollector, these values live only here, not in
// status.volumes: a cluster with thousands of bricks would otherwise carry
// thousands of status entries rewritten every heal interval. Only the
// leader (the replica that runs the heal syncer) serves them.
//
// Each sync of a cluster replaces its whole set, so a volume or brick GD2
// no longer lists loses its series at the next sync; a sync that could not
// list the volumes leaves the last reading in place (the values are "as
// last read"); a deleted cluster's set is dropped. Labels are bounded by
// the volumes and bricks that exist.
type VolumeMetrics struct {
	mu       sync.Mutex
	clusters map[engine.Key][]volumeSample

	info, up, capacity, used          *prometheus.Desc
	brickUp, brickCapacity, brickUsed *prometheus.Desc
}

// volumeSample is one volume as one heal sync read it.
type volumeSample struct {
	name, typ, state string
	// up: started, and GD2's volume status answered online.
	up bool
	// sized: GD2's volume status answered, so capacity and used are known.
	sized          bool
	capacity, used uint64
	bricks         []brickSample
}

// brickSample is one brick of a started volume, from bricks status.
type brickSample struct {
	// brick is host:path, as GD2's heal-info names bricks.
	brick string
	up    bool
	// sized: the brick's node answered (an unreachable node's row carries
	// only the brick's info, no sizes).
	sized          bool
	capacity, used uint64
}

// NewVolumeMetrics builds the empty collector.
func NewVolumeMetrics() *VolumeMetrics {
	vl := []string{"namespace", "cluster", "volume"}
	bl := append(append([]string(nil), vl...), "brick")
	return &VolumeMetrics{
		clusters:      map[engine.Key][]volumeSample{},
		info:          prometheus.NewDesc("anthill_volume_info", "1 for every volume GD2 lists, with its type and GD2 state (Created, Started, Stopped), as last read.", append(append([]string(nil), vl...), "type", "state"), nil),
		up:            prometheus.NewDesc("anthill_volume_up", "1 when the volume is started and GD2's volume status says it is online, else 0, as last read.", vl, nil),
		capacity:      prometheus.NewDesc("anthill_volume_capacity_bytes", "Capacity of a started volume, from GD2's volume status (statfs of a mount of the volume), as last read.", vl, nil),
		used:          prometheus.NewDesc("anthill_volume_used_bytes", "Bytes used on a started volume, from GD2's volume status, as last read.", vl, nil),
		brickUp:       prometheus.NewDesc("anthill_brick_up", "1 when GD2's bricks status says the brick of a started volume is online, else 0 (its node unreachable, its process down), as last read.", bl, nil),
		brickCapacity: prometheus.NewDesc("anthill_brick_capacity_bytes", "Capacity of a brick's file system (statfs of the brick directory, from GD2's bricks status), as last read; absent while its node is unreachable.", bl, nil),
		brickUsed:     prometheus.NewDesc("anthill_brick_used_bytes", "Bytes used on a brick's file system, from GD2's bricks status, as last read; absent while its node is unreachable.", bl, nil),
	}
}

// set replaces the cluster's readings.
func (m *VolumeMetrics) set(key engine.Key, vols []volumeSample) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.clusters[clusterOnly(key)] = vols
}

// get returns the cluster's last readings.
func (m *VolumeMetrics) get(key engine.Key) []volumeSample {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.clusters[clusterOnly(key)]
}

// forget drops a deleted cluster's readings.
func (m *VolumeMetrics) forget(key engine.Key) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.clusters, clusterOnly(key))
}

func clusterOnly(k engine.Key) engine.Key { return engine.Key{Namespace: k.Namespace, Name: k.Name} }

// Describe sends every metric's description.
func (m *VolumeMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{m.info, m.up, m.capacity, m.used, m.brickUp, m.brickCapacity, m.brickUsed} {
		ch <- d
	}
}

// Collect sends the last reading of every cluster.
func (m *VolumeMetrics) Collect(ch chan<- prometheus.Metric) {
	m.mu.Lock()
	defer m.mu.Unlock()
	gauge := func(d *prometheus.Desc, v float64, lv ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, lv...)
	}
	for k, vols := range m.clusters {
		for _, v := range vols {
			gauge(m.info, 1, k.Namespace, k.Name, v.name, v.typ, v.state)
			gauge(m.up, boolValue(v.up), k.Namespace, k.Name, v.name)
			if v.sized {
				gauge(m.capacity, float64(v.capacity), k.Namespace, k.Name, v.name)
				gauge(m.used, float64(v.used), k.Namespace, k.Name, v.name)
			}
			for _, b := range v.bricks {
				gauge(m.brickUp, boolValue(b.up), k.Namespace, k.Name, v.name, b.brick)
				if b.sized {
					gauge(m.brickCapacity, float64(b.capacity), k.Namespace, k.Name, v.name, b.brick)
					gauge(m.brickUsed, float64(b.used), k.Namespace, k.Name, v.name, b.brick)
				}
			}
		}
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// volumeSampleOf is what one heal reading says of a volume for the
// metrics: its status (nil when not started, or when GD2's volume status
// failed: a started volume GD2 cannot mount is down) and its bricks status
// (nil when not read). A brick row without a reachable node (only info)
// is down and unsized. Bricks are sorted so the output is stable.
func volumeSampleOf(v gd2.Volume, st *gd2.VolumeStatus, bricks []gd2.BrickStatus) volumeSample {
	out := volumeSample{name: v.Name, typ: string(v.Type), state: string(v.State)}
	started := v.State == gd2.VolumeStarted
	if started && st != nil {
		out.up = st.Online
		out.sized = st.Size.Capacity > 0
		out.capacity, out.used = st.Size.Capacity, st.Size.Used
	}
	for _, b := range bricks {
		bs := brickSample{brick: b.Info.Host + ":" + b.Info.Path, up: started && b.Online}
		if b.Size.Capacity > 0 {
			bs.sized, bs.capacity, bs.used = true, b.Size.Capacity, b.Size.Used
		}
		out.bricks = append(out.bricks, bs)
	}
	sort.Slice(out.bricks, func(i, j int) bool { return out.bricks[i].brick < out.bricks[j].brick })
	return out
}

// volumeSamples turns one sync's readings into the cluster's volume
// metrics. A started volume whose bricks status failed keeps the bricks
// it had at the last reading, so one failed call does not make its bricks
// vanish from the metrics (and their alerts restart).
func (s *Syncer) volumeSamples(key engine.Key, readings []healReading) []volumeSample {
	prev := map[string][]brickSample{}
	for _, v := range s.Volumes.get(key) {
		prev[v.name] = v.bricks
	}
	out := make([]volumeSample, 0, len(readings))
	for _, r := range readings {
		vs := volumeSampleOf(r.vol, r.status, r.bricksStatus)
		if r.started && !r.bricksRead {
			vs.bricks = prev[r.vol.Name]
		}
		out = append(out, vs)
	}
	return out
}
