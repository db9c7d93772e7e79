//go:build e2e

package e2e

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/e2e/framework"
)

// BenchmarkSteadyStateThirtyNodes measures what 30 Online Gluster nodes
// cost while nothing changes: five clusters of six nodes (one simulator
// each), brought Online, left to settle, then watched for a window
// (ANTHILL_STEADY_WINDOW, default 90s). It reports, from the operator's own
// counters over the window, GD2 calls per node per minute, API reads (GETs
// of objects and lists; watches apart) and writes per minute, and syncs per
// minute (docs/performance.md has the figures and how to rerun).
func BenchmarkSteadyStateThirtyNodes(b *testing.B) {
	// One operator over every namespace, with production timers, as users run it.
	watchEveryNamespace(b)
	const clusters, perTemplate, nodes = 5, 2, 30
	ctx := context.Background()
	window := 90 * time.Second
	if w, err := time.ParseDuration(os.Getenv("ANTHILL_STEADY_WINDOW")); err == nil && w > 0 {
		window = w
	}
	if err := env.CreateLocalStorage(ctx, 12, "100Gi"); err != nil {
		b.Fatal(err)
	}
	addr, err := operatorOf(b).HTTPAddress(ctx, time.Minute)
	if err != nil {
		b.Fatal(err)
	}
	for range b.N {
		var namespaces []string
		for range clusters {
			ns := newNamespace(b)
			sim := startSim(b, ns, defaultSimOptions)
			// Each cluster is named after its namespace: clusters of one
			// name want one StorageClass, and each loser's Warning Event
			// would be a write at rest.
			if err := env.CreateSimAuthSecret(ctx, ns, ns, sim); err != nil {
				b.Fatal(err)
			}
			c, err := framework.SampleCluster(ns, ns, sim, perTemplate)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Create(ctx, c, metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
			namespaces = append(namespaces, ns)
		}
		start := time.Now()
		err := framework.WaitFor(ctx, 10*time.Minute, func(ctx context.Context) (bool, error) {
			online := 0
			for _, ns := range namespaces {
				list, err := framework.ClusterNodes(ctx, anthill, ns, ns)
				if err != nil {
					return false, err
				}
				for _, n := range list {
					if n.Status.State == "Online" {
						online++
					}
				}
			}
			return online == nodes, fmt.Errorf("%d of %d Online", online, nodes)
		})
		if err != nil {
			b.Fatal(err)
		}
		up := time.Since(start)
		w := measureRest(b, addr, window)
		gd2PerNode := w.rate("anthill_gd2_requests_total", nil) / nodes
		reads := w.rate("anthill_kube_requests_total", map[string]string{"verb": "get"})
		writes := w.writes()
		syncs := (syncCount(w.after) - syncCount(w.before)) / w.minutes
		b.ReportMetric(gd2PerNode, "gd2-calls/node/min")
		b.ReportMetric(reads, "api-reads/min")
		b.ReportMetric(writes, "api-writes/min")
		b.ReportMetric(syncs, "syncs/min")
		fmt.Printf("steady: %d nodes (%d clusters) Online in %s; over %s: %.1f GD2 calls/node/min, %.0f API reads/min, %.0f API writes/min, %.0f syncs/min\n",
			nodes, clusters, up.Round(100*time.Millisecond), window, gd2PerNode, reads, writes, syncs)
		fmt.Printf("steady:   changes per minute: %s\n", w.changes())
		fmt.Printf("steady:   GD2 calls/node/min by operation: %s\n", w.gd2Operations(nodes))
	}
}

// syncCount is the number of dispatcher syncs in s, every machine.
func syncCount(s scrape) float64 {
	var n float64
	if mf := s["anthill_dispatcher_sync_duration_seconds"]; mf != nil {
		for _, m := range mf.GetMetric() {
			n += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return n
}

// measureRest lets the operator at addr settle for 30 s (the clusters'
// own machines finish: Ready, budgets, CSI), then scrapes its counters
// at the start and the end of window.
func measureRest(b *testing.B, addr string, window time.Duration) restWindow {
	b.Helper()
	time.Sleep(30 * time.Second)
	before := scrapeMetrics(b, addr)
	t0 := time.Now()
	time.Sleep(window)
	after := scrapeMetrics(b, addr)
	return restWindow{before: before, after: after, minutes: time.Since(t0).Minutes()}
}

// restWindow is two scrapes of the operator's metrics, minutes apart.
type restWindow struct {
	before, after scrape
	minutes       float64
}

// rate is how much the series of name with labels grew per minute.
func (w restWindow) rate(name string, labels map[string]string) float64 {
	v1, _ := w.after.value(name, labels)
	v0, _ := w.before.value(name, labels)
	return (v1 - v0) / w.minutes
}

// writeVerbs are the verbs of anthill_kube_requests_total that change
// something.
var writeVerbs = []string{"create", "update", "patch", "delete"}

// writes is the operator's API writes per minute.
func (w restWindow) writes() float64 {
	var n float64
	for _, verb := range writeVerbs {
		n += w.rate("anthill_kube_requests_total", map[string]string{"verb": verb})
	}
	return n
}

// gd2Operations is GD2 calls per node per minute by operation, over the
// window, busiest first.
func (w restWindow) gd2Operations(nodes int) string {
	rates := map[string]float64{}
	for _, m := range w.after.matching("anthill_gd2_requests_total", nil) {
		for _, l := range m.GetLabel() {
			if l.GetName() == "operation" && rates[l.GetValue()] == 0 {
				rates[l.GetValue()] = w.rate("anthill_gd2_requests_total", map[string]string{"operation": l.GetValue()}) / float64(nodes)
			}
		}
	}
	ops := slices.Collect(maps.Keys(rates))
	slices.SortFunc(ops, func(a, b string) int { return cmp.Compare(rates[b], rates[a]) })
	var parts []string
	for _, op := range ops {
		if rates[op] > 0 {
			parts = append(parts, fmt.Sprintf("%s %.2f", op, rates[op]))
		}
	}
	return strings.Join(parts, ", ")
}

// changes says what changed over the window, per minute: the API writes
// by verb and resource, and the transitions committed by machine, source
// and target state. A fleet at rest should show the Lease alone.
func (w restWindow) changes() string {
	var parts []string
	for _, c := range []struct {
		metric string
		label  func(l map[string]string) (string, bool)
	}{
		{"anthill_kube_requests_total", func(l map[string]string) (string, bool) {
			return l["verb"] + " " + l["resource"], slices.Contains(writeVerbs, l["verb"])
		}},
		{"anthill_fsm_transitions_total", func(l map[string]string) (string, bool) {
			return "transition " + l["machine"] + " " + l["from"] + "->" + l["to"], true
		}},
	} {
		for _, m := range w.after.matching(c.metric, nil) {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			if name, ok := c.label(have); ok {
				if r := w.rate(c.metric, have); r > 0 {
					parts = append(parts, fmt.Sprintf("%s %.1f", name, r))
				}
			}
		}
	}
	if len(parts) == 0 {
		return "nothing"
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}
