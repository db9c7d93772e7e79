//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

// TestAutoscaleGrowsWhenThePoolFillsAndShrinksWhenItEmpties runs an
// automatic-mode cluster of three one-zone templates (1..2 servers of one
// 100Gi device each, band 40Gi..150Gi, cooldown 20s). A replica-3 volume
// of 70Gi takes 70Gi of every first server's device, as GD2 allocates a
// brick: each template's free (29.6Gi) falls below freeStorageMin and the
// autoscaler adds one server per template, one step at a time. A second
// volume fills the new servers past freeStorageMin again, but every
// template is at maxNodes and says so. Deleting both volumes gives the
// space back (200Gi free per template, above freeStorageMax) and the
// autoscaler removes one server per template through the decommission
// drain. The operator is SIGKILLed once, while the first new server joins.
// Throughout, no template ever has more than maxNodes servers or fewer
// than minNodes counted, two steps are at least the cooldown apart, and
// the simulator records no violation.
func TestAutoscaleGrowsWhenThePoolFillsAndShrinksWhenItEmpties(t *testing.T) {
	sideBySideLong(t)
	ns := newNamespace(t)
	const name = "autoscale"
	const cooldown = 20 * time.Second
	ctx := context.Background()
	startSim(t, ns, defaultSimOptions)
	if err := env.CreateSimAuthSecret(ctx, ns, name, simOf(t)); err != nil {
		t.Fatal(err)
	}
	c, err := framework.SampleCluster(ns, name, simOf(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	c.Spec.Mode = operatorv1alpha1.ClusterModeAutomatic
	for i := range c.Spec.NodeTemplates {
		tm := &c.Spec.NodeTemplates[i]
		tm.Nodes, tm.MinNodes, tm.MaxNodes = nil, ptr.To[int32](1), ptr.To[int32](2)
		tm.FreeStorageMin, tm.FreeStorageMax = ptr.To(resource.MustParse("40Gi")), ptr.To(resource.MustParse("150Gi"))
	}
	c.Spec.Autoscaling = &operatorv1alpha1.AutoscalingSpec{Cooldown: &metav1.Duration{Duration: cooldown}}
	if _, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Create(ctx, c, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	templates := []string{"zone-1", "zone-2", "zone-3"}

	waitNodes(t, ns, name, 3, 3*time.Minute)
	waitAutoscaling(t, ns, name, "every template within its band", time.Minute, func(a *operatorv1alpha1.AutoscalingStatus) bool {
		return a.Reason == states.ReasonWithinBand && allTemplates(a, func(ts operatorv1alpha1.TemplateAutoscalingStatus) bool { return ts.Desired == 1 })
	})

	// The bounds hold at every instant of the run, and every step the
	// autoscaler records is seen.
	stop, stepTimes := watchTemplateBounds(t, ns, name, 1, 2)
	defer stop()

	g := gd2Client(t)
	createSizedVolume(t, g, "fill-1", 70<<30)
	// The first step: one template grows; the operator dies while its new
	// server joins, and the one that starts carries the step out.
	waitAutoscaling(t, ns, name, "a first step up", 2*time.Minute, func(a *operatorv1alpha1.AutoscalingStatus) bool {
		return a.LastScaleTime != nil && countDesired(a) == 4
	})
	restartOperator(t)
	waitNodes(t, ns, name, 6, 5*time.Minute)
	waitAutoscaling(t, ns, name, "every template at maxNodes", time.Minute, func(a *operatorv1alpha1.AutoscalingStatus) bool {
		return allTemplates(a, func(ts operatorv1alpha1.TemplateAutoscalingStatus) bool { return ts.Desired == 2 })
	})

	// Full again, but at maxNodes: the reason says so and nothing grows.
	createSizedVolume(t, g, "fill-2", 95<<30)
	waitAutoscaling(t, ns, name, "every template below freeStorageMin at maxNodes", 2*time.Minute, func(a *operatorv1alpha1.AutoscalingStatus) bool {
		return allTemplates(a, func(ts operatorv1alpha1.TemplateAutoscalingStatus) bool { return ts.Reason == states.ReasonAtMaxNodes })
	})
	waitClusterCondition(t, ns, name, "Autoscaling", states.ReasonAtMaxNodes, time.Minute)
	if n, _, err := nodeStates(ctx, ns, name); err != nil || len(n) != 6 {
		t.Fatalf("nodes after filling the pool at maxNodes: %d (%v), want 6", len(n), err)
	}

	// Empty: every template shrinks back to minNodes, one drain at a time.
	for _, v := range []string{"fill-1", "fill-2"} {
		deleteVolume(t, g, v)
	}
	waitNodes(t, ns, name, 3, 6*time.Minute)
	waitAutoscaling(t, ns, name, "every template back at minNodes and within its band", 2*time.Minute, func(a *operatorv1alpha1.AutoscalingStatus) bool {
		return a.Reason == states.ReasonWithinBand && allTemplates(a, func(ts operatorv1alpha1.TemplateAutoscalingStatus) bool { return ts.Desired == 1 })
	})
	stop()

	// Six steps, each recorded at least the cooldown after the one before
	// (lastScaleTime, which the cooldown runs from) ...
	times := stepTimes()
	if len(times) != 6 {
		t.Errorf("saw %d steps recorded (%v), want 6", len(times), times)
	}
	for i := 1; i < len(times); i++ {
		if gap := times[i].Sub(times[i-1]); gap < cooldown {
			t.Errorf("steps %d and %d were recorded %s apart, less than the cooldown %s", i, i+1, gap, cooldown)
		}
	}
	// ... and each a scale transition with the autoscaler's reason, growth
	// first, then shrinking.
	got, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var steps []operatorv1alpha1.TransitionRecord
	for _, h := range got.Status.History {
		if h.Event == string(states.ClusterScale) {
			steps = append(steps, h)
		}
	}
	var reasons []string
	for _, s := range steps {
		reasons = append(reasons, s.Reason)
	}
	want := []string{states.ReasonScalingUp, states.ReasonScalingUp, states.ReasonScalingUp, states.ReasonScalingDown, states.ReasonScalingDown, states.ReasonScalingDown}
	if strings.Join(reasons, ",") != strings.Join(want, ",") {
		t.Fatalf("scale transitions %v, want %v", reasons, want)
	}
	for i, s := range steps {
		t.Logf("step %d at %s: %s", i+1, s.Time.Format(time.RFC3339), s.Message)
	}
	// Each template grew once and shrank once.
	for _, tm := range templates {
		n := 0
		for _, s := range steps {
			if strings.Contains(s.Message, "Template "+tm+":") {
				n++
			}
		}
		if n != 2 {
			t.Errorf("template %s took %d steps, want one up and one down", tm, n)
		}
	}
	noViolations(t)
}

// createSizedVolume creates and starts a replica-3 smart volume of size
// bytes, with self-heal on: GD2 allocates one brick of that size (plus its thin pool's
// metadata) on a device of each of three zones.
func createSizedVolume(t testing.TB, g *gd2.Client, name string, size uint64) {
	t.Helper()
	ctx := context.Background()
	if _, err := g.CreateVolume(ctx, gd2.VolumeCreateRequest{Name: name, Size: size, Replica: 3}); err != nil {
		t.Fatalf("create volume %s: %v", name, err)
	}
	if _, err := g.StartVolume(ctx, name, false); err != nil {
		t.Fatalf("start volume %s: %v", name, err)
	}
	if _, err := g.SetVolumeOptions(ctx, name, gd2.VolumeOptionRequest{
		Options: map[string]string{"cluster/replicate.self-heal-daemon": "on"}, AllowAdvanced: true,
	}); err != nil {
		t.Fatalf("enable self-heal on %s: %v", name, err)
	}
}

// deleteVolume stops and deletes a volume; GD2 gives its bricks' space
// back to their devices.
func deleteVolume(t testing.TB, g *gd2.Client, name string) {
	t.Helper()
	ctx := context.Background()
	if _, err := g.StopVolume(ctx, name); err != nil {
		t.Fatalf("stop volume %s: %v", name, err)
	}
	if err := g.DeleteVolume(ctx, name); err != nil {
		t.Fatalf("delete volume %s: %v", name, err)
	}
}

// waitAutoscaling waits until the cluster's status.autoscaling satisfies
// ok.
func waitAutoscaling(t testing.TB, ns, name, what string, timeout time.Duration, ok func(*operatorv1alpha1.AutoscalingStatus) bool) {
	t.Helper()
	err := framework.WaitFor(context.Background(), timeout, func(ctx context.Context) (bool, error) {
		c, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		a := c.Status.Autoscaling
		if a != nil && ok(a) {
			return true, nil
		}
		return false, fmt.Errorf("cluster %s, autoscaling %s", c.Status.Phase, describeAutoscaling(a))
	})
	if err != nil {
		dumpNamespace(t, ns)
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func describeAutoscaling(a *operatorv1alpha1.AutoscalingStatus) string {
	if a == nil {
		return "(none)"
	}
	var parts []string
	for _, ts := range a.Templates {
		free := "?"
		if ts.Free != nil {
			free = ts.Free.String()
		}
		parts = append(parts, fmt.Sprintf("%s=%d free %s %s", ts.Name, ts.Desired, free, ts.Reason))
	}
	return fmt.Sprintf("%s (%s): %s", a.Reason, a.Message, strings.Join(parts, ", "))
}

func allTemplates(a *operatorv1alpha1.AutoscalingStatus, ok func(operatorv1alpha1.TemplateAutoscalingStatus) bool) bool {
	if len(a.Templates) == 0 {
		return false
	}
	for _, ts := range a.Templates {
		if !ok(ts) {
			return false
		}
	}
	return true
}

func countDesired(a *operatorv1alpha1.AutoscalingStatus) int {
	n := 0
	for _, ts := range a.Templates {
		n += int(ts.Desired)
	}
	return n
}

// waitClusterCondition waits until the cluster's condition of type cond
// has reason.
func waitClusterCondition(t testing.TB, ns, name, cond, reason string, timeout time.Duration) {
	t.Helper()
	err := framework.WaitFor(context.Background(), timeout, func(ctx context.Context) (bool, error) {
		c, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		got := apimeta.FindStatusCondition(c.Status.Conditions, cond)
		return got != nil && got.Reason == reason, fmt.Errorf("condition %s: %+v", cond, got)
	})
	if err != nil {
		t.Fatalf("waiting for condition %s with reason %s: %v", cond, reason, err)
	}
}

// watchTemplateBounds checks, until stop is called, that no template of the
// cluster ever has more than hi GlusterNodes (leaving ones included) or
// fewer than lo that count (neither leaving nor asked to). stop fails the
// test with what it saw, once. steps returns every distinct
// status.autoscaling.lastScaleTime seen, in order.
func watchTemplateBounds(t *testing.T, ns, name string, lo, hi int) (stop func(), steps func() []time.Time) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var seen []string
	var times []time.Time
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			if c, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(context.Background(), name, metav1.GetOptions{}); err == nil {
				if a := c.Status.Autoscaling; a != nil && a.LastScaleTime != nil {
					mu.Lock()
					if len(times) == 0 || !times[len(times)-1].Equal(a.LastScaleTime.Time) {
						times = append(times, a.LastScaleTime.Time)
					}
					mu.Unlock()
				}
			}
			nodes, err := framework.ClusterNodes(context.Background(), anthill, ns, name)
			if err != nil {
				continue
			}
			all, counted := map[string]int{}, map[string]int{}
			for _, n := range nodes {
				st := fsm.State(n.Status.State)
				if states.NodeMeaning(st).Class == states.NodeClassGone {
					continue
				}
				all[n.Spec.Template]++
				if n.DeletionTimestamp == nil && n.Annotations[objects.AnnotationRequest] == "" && states.NodeMeaning(st).Counts() {
					counted[n.Spec.Template]++
				}
			}
			for tm, n := range all {
				if n > hi {
					mu.Lock()
					seen = append(seen, fmt.Sprintf("template %s had %d nodes, above maxNodes %d", tm, n, hi))
					mu.Unlock()
				}
			}
			for _, tm := range []string{"zone-1", "zone-2", "zone-3"} {
				if counted[tm] < lo {
					mu.Lock()
					seen = append(seen, fmt.Sprintf("template %s had %d counted nodes, below minNodes %d", tm, counted[tm], lo))
					mu.Unlock()
				}
			}
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			close(done)
			wg.Wait()
			if len(seen) > 0 {
				sort.Strings(seen)
				t.Errorf("template bounds broken %d time(s), e.g. %s", len(seen), seen[0])
			}
		})
	}
	steps = func() []time.Time {
		mu.Lock()
		defer mu.Unlock()
		return append([]time.Time(nil), times...)
	}
	return stop, steps
}
