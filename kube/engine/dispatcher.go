package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// Key names one machine instance: the machine kind and the namespaced name
// of the object whose status persists it. The dispatcher has one queue of
// Keys for every machine, so one object is never synced by two workers at
// once.
type Key struct {
	Machine   string
	Namespace string
	Name      string
}

func (k Key) String() string { return k.Machine + "/" + k.Namespace + "/" + k.Name }

// Result is what a sync asks of the dispatcher afterwards.
type Result struct {
	// RequeueAfter > 0 syncs the key again after this long (a wait); zero
	// means wait for the next informer event.
	RequeueAfter time.Duration
	// Requeue syncs again at once with rate limiting (one transition was
	// committed and the machine may have more to do).
	Requeue bool
	// Echo is the resourceVersion of the status write this sync made,
	// when every instance waited and the sync said when to look again
	// (Requeue or RequeueAfter): the informer's delivery of that write
	// brings nothing the key's machine did not just decide on, so it does
	// not wake the key (Dispatcher.WatchUpdates). Without this, a wait
	// whose message changes at every look (a heal's pending count) would
	// look again as soon as its own write came back, not when it said.
	Echo string
}

// Syncer advances one machine kind by at most one transition per call.
type Syncer interface {
	Sync(ctx context.Context, key Key) (Result, error)
}

// DispatcherConfig wires a Dispatcher.
type DispatcherConfig struct {
	Workers int
	Metrics *Metrics
	Log     *zap.Logger
	// MaxWait, when positive, bounds every timed wait (Result.RequeueAfter):
	// a machine waiting on a slow process looks again at least this often.
	// Decisions read the clock, not the number of looks, so a shorter
	// wait changes when a machine notices, never what it decides. Zero
	// keeps each machine's own interval.
	MaxWait time.Duration
}

// Dispatcher is the single informer-driven loop that advances every machine.
// Informer handlers only enqueue keys; workers pop a key, call the machine's
// Syncer, and requeue as the Result says. Nothing in a worker sleeps.
type Dispatcher struct {
	cfg     DispatcherConfig
	queue   workqueue.TypedRateLimitingInterface[Key]
	syncers map[string]Syncer
	synced  []cache.InformerSynced
	log     *zap.Logger
	echoes  echoes
}

// NewDispatcher creates the queue and registers the informers every machine
// needs.
func NewDispatcher(cfg DispatcherConfig) (*Dispatcher, error) {
	if cfg.Workers < 1 {
		return nil, fmt.Errorf("workers must be at least 1, got %d", cfg.Workers)
	}
	d := &Dispatcher{
		cfg: cfg,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			retryLimiter(),
			workqueue.TypedRateLimitingQueueConfig[Key]{Name: "anthill"}),
		syncers: map[string]Syncer{},
		log:     cfg.Log,
	}
	return d, nil
}

// Register adds a machine's Syncer. It must be called before Run.
func (d *Dispatcher) Register(machine string, s Syncer) { d.syncers[machine] = s }

// Watch registers informer handlers that map each object of inf to zero or
// more keys. Handlers resolve tombstones and never do I/O. Resyncs arrive
// as updates with an unchanged resourceVersion and are dropped.
func (d *Dispatcher) Watch(inf cache.SharedIndexInformer, keys func(obj any) []Key) error {
	return d.WatchUpdates(inf, func(_, newObj any) []Key { return keys(newObj) })
}

// WatchChanges is Watch for informers whose updates matter only when
// changed says so (adds and deletes always do).
func (d *Dispatcher) WatchChanges(inf cache.SharedIndexInformer, changed func(oldObj, newObj any) bool, keys func(obj any) []Key) error {
	return d.WatchUpdates(inf, func(oldObj, newObj any) []Key {
		if oldObj != nil && !changed(oldObj, newObj) {
			return nil
		}
		return keys(newObj)
	})
}

// WatchUpdates is Watch for informers whose updates concern different
// keys depending on what changed: keys gets (nil, obj) for an add or a
// delete, (old, new) for an update. A resync (an update at an unchanged
// resourceVersion) wakes no key, and an update that is a key's own
// status write (Result.Echo) does not wake that key.
func (d *Dispatcher) WatchUpdates(inf cache.SharedIndexInformer, keys func(oldObj, newObj any) []Key) error {
	enqueue := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		for _, k := range keys(nil, obj) {
			d.queue.Add(k)
		}
	}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(oldObj, newObj any) { d.updated(keys, oldObj, newObj) },
		DeleteFunc: enqueue,
	})
	if err != nil {
		return err
	}
	d.synced = append(d.synced, inf.HasSynced)
	return nil
}

// updated enqueues the keys an update concerns, but for a resync and for
// the keys whose own write it is.
func (d *Dispatcher) updated(keys func(oldObj, newObj any) []Key, oldObj, newObj any) {
	rv := resourceVersion(newObj)
	if rv != "" && rv == resourceVersion(oldObj) {
		return
	}
	for _, k := range keys(oldObj, newObj) {
		if !d.echoes.own(k, rv) {
			d.queue.Add(k)
		}
	}
}

// Enqueue adds a key directly (CLI requests, tests).
func (d *Dispatcher) Enqueue(k Key) { d.queue.Add(k) }

// WaitForSync blocks until every watched informer has synced.
func (d *Dispatcher) WaitForSync(ctx context.Context) error {
	if !cache.WaitForCacheSync(ctx.Done(), d.synced...) {
		return errors.New("informers did not sync before shutdown")
	}
	return nil
}

// Run starts the workers and blocks until ctx ends; then it shuts the
// queue down and waits for in-flight syncs to return.
func (d *Dispatcher) Run(ctx context.Context) {
	defer utilruntime.HandleCrash()
	d.log.Info("dispatcher started", zap.Int(LogWorkers, d.cfg.Workers))
	var wg sync.WaitGroup
	for range d.cfg.Workers {
		wg.Go(func() {
			for d.processNext(ctx) {
			}
		})
	}
	<-ctx.Done()
	d.queue.ShutDownWithDrain()
	wg.Wait()
	// ShutDownWithDrain stops the queue but not the delaying queue's timer
	// loop; ShutDown does.
	d.queue.ShutDown()
	d.log.Info("dispatcher stopped")
}

// maxRetryDelay caps the backoff of a key whose syncs keep failing.
// client-go's default grows to 1,000 s; GD2's failures are mostly
// transient (a restart, a lost response, a slow etcd), and a node left
// waiting a quarter of an hour after one burst of them holds up its drain
// or upgrade for nothing. Each retry is a full sync from the informer's
// cache, which costs little.
const maxRetryDelay = 30 * time.Second

// retryLimiter is the queue's backoff for failed syncs, per key:
// exponential from 5 ms up to maxRetryDelay, reset by a sync that
// succeeds.
func retryLimiter() workqueue.TypedRateLimiter[Key] {
	return workqueue.NewTypedItemExponentialFailureRateLimiter[Key](5*time.Millisecond, maxRetryDelay)
}

// conflictRetry is how soon a sync whose status write hit a conflict runs
// again.
const conflictRetry = 100 * time.Millisecond

// slowSync is how long a sync may take before a debug line names it: a
// sync reads listers and makes a few API and GD2 calls.
const slowSync = 200 * time.Millisecond

func (d *Dispatcher) processNext(ctx context.Context) bool {
	key, quit := d.queue.Get()
	if quit {
		return false
	}
	defer d.queue.Done(key)
	s, ok := d.syncers[key.Machine]
	if !ok {
		d.queue.Forget(key)
		return true
	}
	start := time.Now()
	res, err := s.Sync(ctx, key)
	took := time.Since(start)
	d.echoes.note(key, res.Echo, err)
	if d.cfg.Metrics != nil {
		d.cfg.Metrics.SyncDuration.WithLabelValues(key.Machine).Observe(took.Seconds())
	}
	if took >= slowSync {
		d.log.Debug("slow sync", zap.String(LogKey, key.String()), zap.Duration("took", took), zap.Error(err))
	}
	switch {
	case err != nil:
		class := ErrorClass(err)
		if d.cfg.Metrics != nil {
			d.cfg.Metrics.SyncErrors.WithLabelValues(key.Machine, class).Inc()
		}
		if class == ClassConflict {
			// The write lost to a newer version that the informer is about
			// to deliver (its event re-enqueues the key too). That is not a
			// failure to back off from: retry soon from the fresh cache.
			d.log.Debug("sync lost a write race; retrying", zap.String(LogKey, key.String()), zap.Error(err))
			d.queue.Forget(key)
			d.queue.AddAfter(key, conflictRetry)
			return true
		}
		d.log.Info("sync failed; retrying with backoff", zap.String(LogKey, key.String()), zap.String("class", class), zap.Error(err))
		d.queue.AddRateLimited(key)
	case res.Requeue:
		d.queue.Forget(key)
		d.queue.Add(key)
	case res.RequeueAfter > 0:
		d.queue.Forget(key)
		d.queue.AddAfter(key, d.wait(res.RequeueAfter))
	default:
		d.queue.Forget(key)
	}
	return true
}

// wait is after, bounded by MaxWait.
func (d *Dispatcher) wait(after time.Duration) time.Duration {
	if d.cfg.MaxWait > 0 && after > d.cfg.MaxWait {
		return d.cfg.MaxWait
	}
	return after
}
