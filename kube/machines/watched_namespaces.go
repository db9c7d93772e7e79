package machines

import (
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/cache"
)

// An operator watches every namespace (the default) or only the ones
// --watch-namespace names. Watching a list of namespaces takes one informer
// per namespace and kind: the Kubernetes API has no watch over a set of
// namespaces, and a cluster-wide watch filtered afterwards would need the
// cluster-wide read permissions a namespaced install is meant to avoid
// (docs/rbac.md). The syncers read each kind through one lister whatever
// the number of namespaces: the lister reads a nsIndexer, which routes a
// namespaced read to that namespace's informer and joins the others.

// ValidateWatchNamespaces checks the namespaces --watch-namespace names:
// each a valid namespace name, none twice. An empty list means every
// namespace.
func ValidateWatchNamespaces(namespaces []string) error {
	seen := sets.New[string]()
	for _, ns := range namespaces {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return fmt.Errorf("namespace %q: %v", ns, errs)
		}
		if seen.Has(ns) {
			return fmt.Errorf("namespace %q is named twice", ns)
		}
		seen.Insert(ns)
	}
	return nil
}

// watchedFactories are the factories of the namespaced kinds: one over
// every namespace (the cluster-wide factories, shared with the
// cluster-scoped kinds), or one per watched namespace.
func watchedFactories(cluster factories, namespaces []string, build func(ns string) (factories, error)) ([]factories, error) {
	if len(namespaces) == 0 {
		return []factories{cluster}, nil
	}
	out := make([]factories, 0, len(namespaces))
	for _, ns := range namespaces {
		f, err := build(ns)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// informerGetter is what a typed informer of a generated factory offers.
type informerGetter interface {
	Informer() cache.SharedIndexInformer
}

// spread is a namespaced kind's informers, one per watched namespace, and
// the indexer its lister reads.
type spread struct {
	informers []cache.SharedIndexInformer
	indexer   cache.Indexer
}

// spreadOver takes get's informer from each factory.
func spreadOver[I informerGetter](fs []factories, get func(factories) I) spread {
	var s spread
	for _, f := range fs {
		s.informers = append(s.informers, get(f).Informer())
	}
	if len(s.informers) == 1 {
		s.indexer = s.informers[0].GetIndexer()
		return s
	}
	idx := nsIndexer{byNamespace: map[string]cache.Indexer{}}
	for i, f := range fs {
		idx.byNamespace[f.namespace] = s.informers[i].GetIndexer()
		idx.order = append(idx.order, f.namespace)
	}
	s.indexer = idx
	return s
}

// addIndexers adds indexers to every informer of s.
func (s spread) addIndexers(ix cache.Indexers) error {
	for _, inf := range s.informers {
		if err := inf.AddIndexers(ix); err != nil {
			return err
		}
	}
	return nil
}

// errReadOnly: a nsIndexer backs listers only; the informers write their
// own stores.
var errReadOnly = errors.New("a lister's view over several namespaces is read-only")

// nsIndexer reads the stores of one kind's informers, one per namespace,
// as one store. Keys are namespace/name, so a key names its store; a
// namespace index value names its store too; any other read joins all.
type nsIndexer struct {
	byNamespace map[string]cache.Indexer
	order       []string
}

var _ cache.Indexer = nsIndexer{}

func (n nsIndexer) each(f func(cache.Indexer)) {
	for _, ns := range n.order {
		f(n.byNamespace[ns])
	}
}

func (n nsIndexer) List() []any {
	var out []any
	n.each(func(i cache.Indexer) { out = append(out, i.List()...) })
	return out
}

func (n nsIndexer) ListKeys() []string {
	var out []string
	n.each(func(i cache.Indexer) { out = append(out, i.ListKeys()...) })
	return out
}

func (n nsIndexer) Get(obj any) (any, bool, error) {
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return nil, false, err
	}
	return n.GetByKey(key)
}

func (n nsIndexer) GetByKey(key string) (any, bool, error) {
	ns, _, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil, false, err
	}
	if i, ok := n.byNamespace[ns]; ok {
		return i.GetByKey(key)
	}
	return nil, false, nil
}

func (n nsIndexer) Index(indexName string, obj any) ([]any, error) {
	var out []any
	var errs []error
	n.each(func(i cache.Indexer) {
		objs, err := i.Index(indexName, obj)
		out, errs = append(out, objs...), append(errs, err)
	})
	return out, errors.Join(errs...)
}

func (n nsIndexer) IndexKeys(indexName, value string) ([]string, error) {
	var out []string
	var errs []error
	n.each(func(i cache.Indexer) {
		keys, err := i.IndexKeys(indexName, value)
		out, errs = append(out, keys...), append(errs, err)
	})
	return out, errors.Join(errs...)
}

func (n nsIndexer) ListIndexFuncValues(indexName string) []string {
	var out []string
	n.each(func(i cache.Indexer) { out = append(out, i.ListIndexFuncValues(indexName)...) })
	slices.Sort(out)
	return slices.Compact(out)
}

func (n nsIndexer) ByIndex(indexName, value string) ([]any, error) {
	if indexName == cache.NamespaceIndex {
		if i, ok := n.byNamespace[value]; ok {
			return i.ByIndex(indexName, value)
		}
		return nil, nil
	}
	var out []any
	var errs []error
	n.each(func(i cache.Indexer) {
		objs, err := i.ByIndex(indexName, value)
		out, errs = append(out, objs...), append(errs, err)
	})
	return out, errors.Join(errs...)
}

func (n nsIndexer) GetIndexers() cache.Indexers {
	if len(n.order) == 0 {
		return cache.Indexers{}
	}
	return n.byNamespace[n.order[0]].GetIndexers()
}

func (n nsIndexer) AddIndexers(cache.Indexers) error { return errReadOnly }
func (n nsIndexer) Add(any) error                    { return errReadOnly }
func (n nsIndexer) Update(any) error                 { return errReadOnly }
func (n nsIndexer) Delete(any) error                 { return errReadOnly }
func (n nsIndexer) Replace([]any, string) error      { return errReadOnly }
func (n nsIndexer) Resync() error                    { return errReadOnly }

// LastStoreSyncResourceVersion has no single value over several stores.
func (n nsIndexer) LastStoreSyncResourceVersion() string { return "" }
func (n nsIndexer) Bookmark(string)                      {}
