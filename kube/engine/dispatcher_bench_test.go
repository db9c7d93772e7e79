package engine

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/states"
)

// ring is the benchmark's machine: three states in a cycle, one event
// each, so an object never runs out of transitions.
var ring = &fsm.Definition{
	Machine: "ring",
	Doc:     "A cycle of three states, to measure the engine.",
	Initial: "A",
	States: []fsm.StateDoc{
		{Name: "A", Doc: "Initial. Left by `toB`."},
		{Name: "B", Doc: "Entered by `toB`. Left by `toC`."},
		{Name: "C", Doc: "Entered by `toC`. Left by `toA`."},
	},
	Events: []fsm.EventDoc{
		{Name: "toB", Doc: "A to B."}, {Name: "toC", Doc: "B to C."}, {Name: "toA", Doc: "C to A."},
	},
	Transitions: []fsm.Transition{
		{Event: "toB", From: []fsm.State{"A"}, To: "B"},
		{Event: "toC", From: []fsm.State{"B"}, To: "C"},
		{Event: "toA", From: []fsm.State{"C"}, To: "A"},
	},
}

var ringNext = map[fsm.State]fsm.Event{"A": "toB", "B": "toC", "C": "toA"}

// ringSpec keeps each instance's cursor in a ConfigMap's data, read from
// an informer's lister and written through a fake clientset, as a machine
// keeps its cursor in a custom resource's status.
type ringSpec struct {
	lister    corev1listers.ConfigMapLister
	committed atomic.Int64
}

func (s *ringSpec) Definition() *fsm.Definition { return ring }
func (s *ringSpec) Get(k Key) (*corev1.ConfigMap, error) {
	return s.lister.ConfigMaps(k.Namespace).Get(k.Name)
}
func (s *ringSpec) Forget(Key) {}
func (s *ringSpec) Prepare(context.Context, *corev1.ConfigMap) (bool, Result, error) {
	return false, Result{}, nil
}
func (s *ringSpec) Instances(_ context.Context, o *corev1.ConfigMap) ([]Instance[struct{}], error) {
	return []Instance[struct{}]{{State: fsm.State(o.Data["state"])}}, nil
}
func (s *ringSpec) Gather(context.Context, *corev1.ConfigMap, *Instance[struct{}]) error { return nil }
func (s *ringSpec) Decide(in Instance[struct{}]) states.Decision {
	return states.Decision{Event: ringNext[in.State], Reason: "Next", Message: "On to the next state."}
}
func (s *ringSpec) Act(context.Context, *corev1.ConfigMap, Instance[struct{}], states.Decision) (any, error) {
	return nil, nil
}
func (s *ringSpec) Message(o *corev1.ConfigMap, _ string) string     { return o.Data["message"] }
func (s *ringSpec) Conditions(*corev1.ConfigMap) *[]metav1.Condition { return nil }
func (s *ringSpec) Record(o *corev1.ConfigMap, outs []Outcome[struct{}], _ time.Time) {
	o.Data["state"], o.Data["message"] = string(outs[0].To), outs[0].Decision.Message
}
func (s *ringSpec) Finish(_ context.Context, _ *corev1.ConfigMap, outs []Outcome[struct{}], res Result, err error) (Result, error) {
	if outs[0].Kind == Fired && err == nil {
		s.committed.Add(1)
	}
	return res, err
}

// ringLoop is the benchmark's world: objects ConfigMaps on a fake API
// server, an informer on them, and a dispatcher running the ring.
type ringLoop struct {
	spec    *ringSpec
	d       *Dispatcher
	stopped chan struct{}
	cancel  context.CancelFunc
}

// fakeConfigMaps is a fake API server for ConfigMaps: a store with
// resource versions and conflicts, and a watch that delivers every update.
// client-go's fake clientset would do too, but its field-managed tracker
// rebuilds a REST mapper on every write and so measures itself.
type fakeConfigMaps struct {
	mu    sync.Mutex
	rv    int64
	items map[string]*corev1.ConfigMap
	w     *benchWatch
}

// benchWatch is one watch of fakeConfigMaps. Stop never closes the result
// channel, so an update racing it cannot send on a closed channel.
type benchWatch struct {
	ch   chan watch.Event
	done chan struct{}
	once sync.Once
}

func (w *benchWatch) ResultChan() <-chan watch.Event { return w.ch }
func (w *benchWatch) Stop()                          { w.once.Do(func() { close(w.done) }) }

func (w *benchWatch) send(e watch.Event) {
	select {
	case w.ch <- e:
	case <-w.done:
	}
}

func (f *fakeConfigMaps) list(context.Context, metav1.ListOptions) (runtime.Object, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	l := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.FormatInt(f.rv, 10)}}
	for _, o := range f.items {
		l.Items = append(l.Items, *o.DeepCopy())
	}
	return l, nil
}

func (f *fakeConfigMaps) watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.w = &benchWatch{ch: make(chan watch.Event, 4096), done: make(chan struct{})}
	return f.w, nil
}

func (f *fakeConfigMaps) update(_ context.Context, o *corev1.ConfigMap) (*corev1.ConfigMap, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := o.Namespace + "/" + o.Name
	cur, ok := f.items[key]
	switch {
	case !ok:
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, o.Name)
	case cur.ResourceVersion != o.ResourceVersion:
		return nil, apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, o.Name, errors.New("stale resourceVersion"))
	}
	f.rv++
	stored := o.DeepCopy()
	stored.ResourceVersion = strconv.FormatInt(f.rv, 10)
	f.items[key] = stored
	if f.w != nil {
		f.w.send(watch.Event{Type: watch.Modified, Object: stored.DeepCopy()})
	}
	return stored.DeepCopy(), nil
}

// IsWatchListSemanticsUnSupported tells the reflector to list, then watch.
func (f *fakeConfigMaps) IsWatchListSemanticsUnSupported() bool { return true }

func newRingLoop(tb testing.TB, objects, workers int) *ringLoop {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	api := &fakeConfigMaps{items: map[string]*corev1.ConfigMap{}}
	for i := range objects {
		api.rv++
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("ring-%03d", i), ResourceVersion: strconv.FormatInt(api.rv, 10)}, Data: map[string]string{}}
		api.items[cm.Namespace+"/"+cm.Name] = cm
	}
	lw := &cache.ListWatch{ListWithContextFunc: api.list, WatchFuncWithContext: api.watch}
	inf := cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(lw, api), &corev1.ConfigMap{}, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	spec := &ringSpec{lister: corev1listers.NewConfigMapLister(inf.GetIndexer())}
	runner := &Runner[*corev1.ConfigMap, struct{}]{
		Machine: spec,
		Writer:  &StatusWriter[*corev1.ConfigMap]{Update: api.update, Slice: func(o *corev1.ConfigMap) any { return o.Data }},
		Log:     &TransitionLog{Log: zap.NewNop(), Metrics: NewMetrics(), Recorder: &record.FakeRecorder{}},
		Clock:   clocktesting.NewFakeClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)),
	}
	d, err := NewDispatcher(DispatcherConfig{Workers: workers, Metrics: NewMetrics(), Log: zap.NewNop()})
	if err != nil {
		tb.Fatal(err)
	}
	d.Register(ring.Machine, runner)
	if err := d.Watch(inf, func(obj any) []Key {
		o, ok := obj.(*corev1.ConfigMap)
		if !ok {
			return nil
		}
		return []Key{{Machine: ring.Machine, Namespace: o.Namespace, Name: o.Name}}
	}); err != nil {
		tb.Fatal(err)
	}
	go inf.RunWithContext(ctx)
	if err := d.WaitForSync(ctx); err != nil {
		tb.Fatal(err)
	}
	l := &ringLoop{spec: spec, d: d, stopped: make(chan struct{}), cancel: cancel}
	tb.Cleanup(l.stop)
	return l
}

func (l *ringLoop) run() {
	ctx, cancel := context.WithCancel(context.Background())
	prev := l.cancel
	l.cancel = func() { cancel(); prev() }
	go func() { l.d.Run(ctx); close(l.stopped) }()
}

// stop ends the dispatcher and waits for it (once).
func (l *ringLoop) stop() {
	if l.cancel == nil {
		return
	}
	l.cancel()
	l.cancel = nil
	select {
	case <-l.stopped:
	case <-time.After(10 * time.Second):
	}
}

// waitCommitted waits until n transitions are committed, or fails after
// timeout.
func (l *ringLoop) waitCommitted(tb testing.TB, n int64, timeout time.Duration) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for l.spec.committed.Load() < n {
		if time.Now().After(deadline) {
			tb.Fatalf("%d of %d transitions committed in %s", l.spec.committed.Load(), n, timeout)
		}
		time.Sleep(time.Millisecond)
	}
}

// The benchmark's loop keeps going: every object's write brings it back
// through the informer and the dispatcher to its next transition.
func TestRingKeepsCommittingThroughTheInformer(t *testing.T) {
	l := newRingLoop(t, 8, 2)
	l.run()
	l.waitCommitted(t, 240, 30*time.Second)
}

// BenchmarkDispatcherTransitions measures the engine's throughput: decided
// and committed transitions per second per core, through the whole loop —
// the informer delivers an object, the dispatcher queues its key, a worker
// runs the Runner (fence, deep copy, machine at the persisted state,
// decide, check, fire, record, one status write, announce), and the
// informer delivering that write starts the next transition. The clients
// are fakes (client-go's fake clientset and its watch), so the figure is
// the operator's own cost plus the fake API server's, never the network's;
// transition Events are left to a no-op recorder. Target: at least 20,000
// per second per core. Run with `make bench-engine`.
func BenchmarkDispatcherTransitions(b *testing.B) {
	l := newRingLoop(b, 256, goruntime.GOMAXPROCS(0))
	b.ResetTimer()
	start, cpu0 := time.Now(), processCPU()
	l.run()
	l.waitCommitted(b, int64(b.N), 10*time.Minute)
	elapsed, cpu := time.Since(start), processCPU()-cpu0
	b.StopTimer()
	l.stop()
	// Per core is per CPU second the whole process spent (workers,
	// informer, fake API server, garbage collector).
	n := float64(l.spec.committed.Load())
	if cpu > 0 {
		b.ReportMetric(n/cpu.Seconds(), "transitions/s/core")
	}
	b.ReportMetric(n/elapsed.Seconds(), "transitions/s")
	b.ReportMetric(float64(elapsed.Nanoseconds())/n, "ns/op")
}

// processCPU is the CPU time (user and system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
