package transitions

import (
	"context"
	"errors"
	"testing"
)

func TestEvictLostPodDeletesOnlyThePodItWasGiven(t *testing.T) {
	w, n := joined(t)
	// The StatefulSet already replaced the lost pod: the world holds a
	// new UID for the node, and the step must leave it alone.
	w.lostPods[n.NodeKey()] = "pod-uid-2"
	if _, err := evictLostPod(context.Background(), w.ops(), n); err != nil {
		t.Fatal(err)
	}
	if got := w.lostPods[n.NodeKey()]; got != "pod-uid-2" {
		t.Errorf("the replacement pod was deleted (left %q)", got)
	}
}

func TestEvictLostPodRefusesWithoutAUID(t *testing.T) {
	w, n := joined(t)
	n.LostPodUID = ""
	w.calls = nil
	if _, err := evictLostPod(context.Background(), w.ops(), n); !errors.Is(err, ErrNoLostPod) {
		t.Fatalf("error = %v, want ErrNoLostPod", err)
	}
	if len(w.calls) != 0 {
		t.Errorf("calls = %v, want none", w.calls)
	}
}
