//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/gd2"
)

// scrape is one read of the operator's /metrics, by metric name.
type scrape map[string]*dto.MetricFamily

// scrapeMetrics reads and parses the operator's /metrics as Prometheus
// would.
func scrapeMetrics(t testing.TB, addr string) scrape {
	t.Helper()
	s, err := tryScrape(addr)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// tryScrape is scrapeMetrics returning its error, for a poll.
func tryScrape(addr string) (scrape, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, fmt.Errorf("GET /metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parse /metrics: %w", err)
	}
	return mfs, nil
}

// matching are the series of name carrying every label of want.
func (s scrape) matching(name string, want map[string]string) []*dto.Metric {
	var out []*dto.Metric
	mf := s[name]
	if mf == nil {
		return nil
	}
next:
	for _, m := range mf.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, w := range want {
			if have[k] != w {
				continue next
			}
		}
		out = append(out, m)
	}
	return out
}

// value is the summed value of the series of name carrying every label of
// want; ok is false when there is none.
func (s scrape) value(name string, want map[string]string) (v float64, ok bool) {
	for _, m := range s.matching(name, want) {
		switch {
		case m.Gauge != nil:
			v += m.GetGauge().GetValue()
		case m.Counter != nil:
			v += m.GetCounter().GetValue()
		case m.Histogram != nil:
			v += float64(m.GetHistogram().GetSampleCount())
		}
		ok = true
	}
	return v, ok
}

// syncsOf is how many syncs of machine op's current run has made, from
// its anthill_dispatcher_sync_duration_seconds histogram.
func syncsOf(op *framework.Operator, machine string) (float64, error) {
	addr, err := op.HTTPAddress(context.Background(), time.Minute)
	if err != nil {
		return 0, err
	}
	s, err := tryScrape(addr)
	if err != nil {
		return 0, err
	}
	n, _ := s.value("anthill_dispatcher_sync_duration_seconds", map[string]string{"machine": machine})
	return n, nil
}

// series counts the series of name carrying every label of want.
func series(s scrape, name string, want map[string]string) int {
	return len(s.matching(name, want))
}

func getOK(t testing.TB, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %s", url, resp.Status, b)
	}
	return string(b)
}

// TestMetricsFollowTheMachines scrapes the operator's /metrics, /healthz
// and /readyz as Prometheus and a kubelet would, and follows one node's
// state gauge through a drain: Online, Draining (held there while another
// node of its volume is partitioned), then gone, with the replacement
// Online.
func TestMetricsFollowTheMachines(t *testing.T) {
	sideBySideLong(t)
	ctx := context.Background()
	ns := newNamespace(t)
	const name = "metrics"
	createCluster(t, ns, name, 2)
	waitNodes(t, ns, name, 6, 3*time.Minute)
	g := gd2Client(t)
	createReplicatedVolume(t, g, "rep")
	if err := simOf(t).Write("rep", 20); err != nil {
		t.Fatal(err)
	}
	waitVolumeHealthy(t, ns, name, "rep", 2*time.Minute)

	addr, err := operatorOf(t).HTTPAddress(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if body := getOK(t, "http://"+addr+"/healthz"); strings.TrimSpace(body) != "ok" {
		t.Errorf("/healthz says %q", body)
	}
	if body := getOK(t, "http://"+addr+"/readyz"); strings.TrimSpace(body) != "ok" {
		t.Errorf("/readyz says %q", body)
	}
	cl := map[string]string{"namespace": ns, "cluster": name}
	with := func(extra ...string) map[string]string {
		m := map[string]string{"namespace": ns, "cluster": name}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		return m
	}
	// waitMetric polls /metrics until cond holds for the scrape.
	waitMetric := func(what string, timeout time.Duration, cond func(scrape) (bool, string)) {
		t.Helper()
		var last string
		err := framework.WaitFor(ctx, timeout, func(context.Context) (bool, error) {
			ok, got := cond(scrapeMetrics(t, addr))
			last = got
			return ok, fmt.Errorf("%s: %s", what, got)
		})
		if err != nil {
			t.Fatalf("%v (last: %s)", err, last)
		}
	}
	is := func(s scrape, name string, labels map[string]string, want float64) (bool, string) {
		v, ok := s.value(name, labels)
		return ok && v == want, fmt.Sprintf("%s%v = %v (present %t), want %v", name, labels, v, ok, want)
	}

	waitMetric("six nodes Online, the volume Healthy, the cluster Ready", time.Minute, func(s scrape) (bool, string) {
		for _, c := range []struct {
			name   string
			labels map[string]string
			want   float64
		}{
			{"anthill_cluster_nodes", with("state", "Online"), 6},
			{"anthill_cluster_nodes", with("state", "Draining"), 0},
			{"anthill_volume_heal_state", with("volume", "rep", "state", "Healthy"), 1},
			{"anthill_cluster_volumes", with("state", "Healthy"), 1},
			{"anthill_volume_heal_pending_entries", with("volume", "rep"), 0},
			{"anthill_volume_bricks", with("volume", "rep", "state", "online"), 3},
			{"anthill_volume_bricks", with("volume", "rep", "state", "offline"), 0},
			{"anthill_cluster_phase", with("phase", "Ready"), 1},
			{"anthill_upgrade_state", with("state", "Idle"), 1},
		} {
			if ok, got := is(s, c.name, c.labels, c.want); !ok {
				return false, got
			}
		}
		return true, ""
	})
	s := scrapeMetrics(t, addr)
	if v, ok := s.value("anthill_fsm_transitions_total", map[string]string{"machine": "node", "to": "Online"}); !ok || v < 6 {
		t.Errorf("anthill_fsm_transitions_total{machine=node,to=Online} = %v, want at least 6", v)
	}
	if v, ok := s.value("anthill_cluster_capacity_total_bytes", cl); !ok || v <= 0 {
		t.Errorf("anthill_cluster_capacity_total_bytes = %v (present %t), want > 0", v, ok)
	}
	if _, ok := s.value("anthill_gd2_requests_total", nil); !ok {
		t.Error("no anthill_gd2_requests_total series")
	}

	// Volume and brick up and utilization, for a plain distribute volume
	// too, with GD2's own numbers.
	if _, err := g.CreateVolume(ctx, gd2.VolumeCreateRequest{Name: "flat", Size: 1 << 30}); err != nil {
		t.Fatalf("create volume: %v", err)
	}
	if _, err := g.StartVolume(ctx, "flat", false); err != nil {
		t.Fatalf("start volume: %v", err)
	}
	for vol, used := range map[string]uint64{"rep": 512 << 20, "flat": 256 << 20} {
		if err := simOf(t).SetVolumeUsed(vol, used); err != nil {
			t.Fatal(err)
		}
	}
	waitMetric("both volumes and their bricks up, with GD2's sizes", time.Minute, func(s scrape) (bool, string) {
		for vol, bricks := range map[string]float64{"rep": 3, "flat": 1} {
			if ok, got := is(s, "anthill_volume_up", with("volume", vol), 1); !ok {
				return false, got
			}
			if ok, got := is(s, "anthill_brick_up", with("volume", vol), bricks); !ok {
				return false, got
			}
			if n := series(s, "anthill_brick_up", with("volume", vol)); n != int(bricks) {
				return false, fmt.Sprintf("anthill_brick_up of %s has %d series, want %v", vol, n, bricks)
			}
			st, err := g.VolumeStatus(ctx, vol)
			if err != nil {
				return false, err.Error()
			}
			if ok, got := is(s, "anthill_volume_capacity_bytes", with("volume", vol), float64(st.Size.Capacity)); !ok {
				return false, got
			}
			if ok, got := is(s, "anthill_volume_used_bytes", with("volume", vol), float64(st.Size.Used)); !ok || st.Size.Used == 0 {
				return false, got
			}
			bs, err := g.BricksStatus(ctx, vol)
			if err != nil {
				return false, err.Error()
			}
			for _, b := range bs {
				l := with("volume", vol, "brick", b.Info.Host+":"+b.Info.Path)
				if ok, got := is(s, "anthill_brick_capacity_bytes", l, float64(b.Size.Capacity)); !ok {
					return false, got
				}
				if ok, got := is(s, "anthill_brick_used_bytes", l, float64(b.Size.Used)); !ok {
					return false, got
				}
			}
		}
		return is(s, "anthill_volume_info", with("volume", "flat", "type", "Distribute", "state", "Started"), 1)
	})
	// Gone before the drain below, which should not have to move the
	// only copy of a distribute volume's brick.
	if _, err := g.StopVolume(ctx, "flat"); err != nil {
		t.Fatal(err)
	}
	if err := g.DeleteVolume(ctx, "flat"); err != nil {
		t.Fatal(err)
	}
	waitMetric("a deleted volume's series are gone", time.Minute, func(s scrape) (bool, string) {
		for _, m := range []string{"anthill_volume_up", "anthill_volume_info", "anthill_volume_capacity_bytes", "anthill_brick_up"} {
			if n := series(s, m, with("volume", "flat")); n != 0 {
				return false, fmt.Sprintf("%s still has %d series of flat", m, n)
			}
		}
		return true, ""
	})

	nodes := waitNodes(t, ns, name, 6, time.Minute)
	victim, other := twoBrickNodes(t, g, nodes, "rep")
	peer := nodes[victim].Status.PeerID
	waitMetric("the victim's state gauge says Online", 30*time.Second, func(s scrape) (bool, string) {
		return is(s, "anthill_node_state", with("node", victim, "state", "Online"), 1)
	})
	partition(t, nodes[other].Status.PeerID, true)
	requestOnNode(t, ns, victim, "decommission")
	waitMetric("the victim's state gauge follows it to Draining", time.Minute, func(s scrape) (bool, string) {
		if ok, got := is(s, "anthill_node_state", with("node", victim, "state", "Draining"), 1); !ok {
			return false, got
		}
		if ok, got := is(s, "anthill_node_state", with("node", victim, "state", "Online"), 0); ok {
			return false, "the Online series is still there: " + got
		}
		return is(s, "anthill_cluster_nodes", with("state", "Draining"), 1)
	})
	waitMetric("the partitioned node's brick is offline", 2*time.Minute, func(s scrape) (bool, string) {
		if ok, got := is(s, "anthill_brick_up", with("volume", "rep"), 2); !ok {
			return false, got
		}
		return is(s, "anthill_volume_bricks", with("volume", "rep", "state", "offline"), 1)
	})
	partition(t, nodes[other].Status.PeerID, false)
	drained(t, g, ns, name, victim, peer, "rep")
	waitMetric("the victim's series is gone and the replacement is Online", 3*time.Minute, func(s scrape) (bool, string) {
		if _, ok := s.value("anthill_node_state", with("node", victim)); ok {
			return false, "anthill_node_state still has a series for " + victim
		}
		if ok, got := is(s, "anthill_cluster_nodes", with("state", "Draining"), 0); !ok {
			return false, got
		}
		if ok, got := is(s, "anthill_cluster_nodes", with("state", "Online"), 6); !ok {
			return false, got
		}
		// The moved brick's old series is gone, its new one is up.
		if n := series(s, "anthill_brick_up", with("volume", "rep")); n != 3 {
			return false, fmt.Sprintf("anthill_brick_up of rep has %d series, want 3", n)
		}
		return is(s, "anthill_brick_up", with("volume", "rep"), 3)
	})
	noViolations(t)
}
