package admin

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
	"github.com/gluster/anthill/kube/engine"
)

// transitionStream lists, then watches, the Events of one selection and
// writes each transition once.
type transitionStream struct {
	kc     kubernetes.Interface
	opts   transitionsOptions
	filter *clusterFilter
	w      io.Writer
	// printed is the Count printed per Event, so a re-list after an expired
	// watch prints nothing twice, and a recurring transition (Count grows)
	// is printed again.
	printed map[types.UID]int32
}

// streamTransitions writes the transitions selected by opts to w, oldest
// first. With opts.Follow it then watches for new ones, re-listing when the
// watch expires, until ctx ends (which is not an error).
func streamTransitions(ctx context.Context, kc kubernetes.Interface, ac versioned.Interface, opts transitionsOptions, w io.Writer) error {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &transitionStream{kc: kc, opts: opts, w: w, printed: map[types.UID]int32{}}
	if opts.Cluster != "" {
		s.filter = newClusterFilter(ac, opts.Cluster)
	}
	rv, err := s.list(ctx)
	if err != nil || !opts.Follow {
		return err
	}
	backoff, relist := time.Duration(0), false
	for ctx.Err() == nil {
		if relist {
			var listed string
			if listed, err = s.list(ctx); err == nil {
				rv, relist = listed, false
			}
		} else {
			rv, relist, err = s.watch(ctx, rv)
		}
		if ctx.Err() != nil {
			break
		}
		if err == nil {
			backoff = 0
			continue
		}
		// The API server may be restarting; keep following, at a bounded
		// pace, rather than end the stream an admin is tailing.
		backoff = min(max(2*backoff, time.Second), 30*time.Second)
		if s.opts.Errors != nil {
			fmt.Fprintf(s.opts.Errors, "anthill transitions: %v (retrying in %s)\n", err, backoff)
		}
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
	}
	return nil
}

// fieldSelector narrows Events server-side to those about anthill's API
// group; the component is checked client-side because it may be in source
// or in reportingComponent, which one selector cannot both express.
func (s *transitionStream) fieldSelector() string {
	return fields.OneTermEqualSelector("involvedObject.apiVersion", operatorv1alpha1.SchemeGroupVersion.String()).String()
}

// list prints every selected transition not printed yet, sorted by time,
// and returns the resource version to watch from.
func (s *transitionStream) list(ctx context.Context) (string, error) {
	var events []corev1.Event
	opts := metav1.ListOptions{FieldSelector: s.fieldSelector(), Limit: 500}
	var rv string
	for {
		page, err := s.kc.CoreV1().Events(s.opts.Namespace).List(ctx, opts)
		if err != nil {
			return "", fmt.Errorf("list events in %s: %w", namespaceText(s.opts.Namespace), err)
		}
		events = append(events, page.Items...)
		rv = page.ResourceVersion
		if page.Continue == "" {
			break
		}
		opts.Continue = page.Continue
	}
	sortEvents(events)
	listed := make(map[types.UID]bool, len(events))
	for i := range events {
		listed[events[i].UID] = true
		if err := s.emit(ctx, &events[i]); err != nil {
			return "", err
		}
	}
	// Events the API server has expired will not come back; forget them so
	// a long follow does not grow without bound.
	for uid := range s.printed {
		if !listed[uid] {
			delete(s.printed, uid)
		}
	}
	return rv, nil
}

// watch prints transitions as they arrive, from rv on. It returns the
// resource version to resume from, and relist when that cannot work (rv
// has expired, or an Event could not be handled) and the caller must list
// again.
func (s *transitionStream) watch(ctx context.Context, rv string) (next string, relist bool, err error) {
	wi, err := s.kc.CoreV1().Events(s.opts.Namespace).Watch(ctx, metav1.ListOptions{
		FieldSelector: s.fieldSelector(), ResourceVersion: rv, AllowWatchBookmarks: true,
	})
	if err != nil {
		if expired(err) {
			return rv, true, nil
		}
		return rv, false, fmt.Errorf("watch events in %s: %w", namespaceText(s.opts.Namespace), err)
	}
	defer wi.Stop()
	for {
		select {
		case <-ctx.Done():
			return rv, false, nil
		case we, open := <-wi.ResultChan():
			if !open {
				return rv, false, nil
			}
			switch we.Type {
			case watch.Added, watch.Modified:
				ev, ok := we.Object.(*corev1.Event)
				if !ok {
					continue
				}
				if err := s.emit(ctx, ev); err != nil {
					// Not printed: list again (after the caller's backoff)
					// so this Event is not skipped.
					return rv, true, err
				}
				rv = ev.ResourceVersion
			case watch.Bookmark:
				if m, err := meta.Accessor(we.Object); err == nil {
					rv = m.GetResourceVersion()
				}
			case watch.Error:
				err := apierrors.FromObject(we.Object)
				if expired(err) {
					return rv, true, nil
				}
				return rv, false, fmt.Errorf("watch events in %s: %w", namespaceText(s.opts.Namespace), err)
			}
		}
	}
}

// emit writes ev if it is a selected transition not printed at its Count.
func (s *transitionStream) emit(ctx context.Context, ev *corev1.Event) error {
	l, ok := eventTransition(ev)
	if !ok {
		return nil
	}
	count := max(ev.Count, 1)
	if s.printed[ev.UID] >= count {
		return nil
	}
	if s.opts.Since > 0 && l.Time.Before(s.opts.Now().Add(-s.opts.Since)) {
		return nil
	}
	match, err := s.filter.match(ctx, l)
	if err != nil || !match {
		return err
	}
	s.printed[ev.UID] = count
	if s.opts.Print != nil {
		return s.opts.Print(s.w, l)
	}
	_, err = fmt.Fprintln(s.w, formatTransition(l, s.opts.Namespace == ""))
	return err
}

// sortEvents orders events by when they last happened. The operator's
// transition Events carry a time in nanoseconds and a sequence number
// (see engine.TransitionEvents); other Events have second precision, so
// ties fall back to the sequence, then to the resource version, which etcd
// assigns in write order.
func sortEvents(events []corev1.Event) {
	sort.SliceStable(events, func(i, j int) bool {
		ti, tj := eventTime(&events[i]), eventTime(&events[j])
		if !ti.Equal(tj) {
			return ti.Before(tj)
		}
		si, oki := eventSequence(&events[i])
		sj, okj := eventSequence(&events[j])
		if oki && okj && si != sj {
			return si < sj
		}
		ri, erri := strconv.ParseUint(events[i].ResourceVersion, 10, 64)
		rj, errj := strconv.ParseUint(events[j].ResourceVersion, 10, 64)
		if erri == nil && errj == nil && ri != rj {
			return ri < rj
		}
		return events[i].Name < events[j].Name
	})
}

// eventSequence is the announcing process's sequence number of ev.
func eventSequence(ev *corev1.Event) (uint64, bool) {
	v, ok := ev.Annotations[engine.AnnotationEventSequence]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(v, 10, 64)
	return n, err == nil
}

func expired(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}
