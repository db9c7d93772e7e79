package node

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gluster/anthill/states"
)

// A node's reading before this one is the last whose count differed, so
// a heal's rate spans the time its count stood still; forgetting starts
// over.
func TestHealReadingsKeepTheLastChange(t *testing.T) {
	var h healReadings
	n := types.NamespacedName{Namespace: "ns", Name: "n"}
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int, pending int64) states.HealReading {
		return states.HealReading{Pending: pending, At: t0.Add(time.Duration(s) * time.Second)}
	}
	for i, step := range []struct {
		read, want states.HealReading
	}{
		{read: at(0, 50)},
		{read: at(1, 40), want: at(0, 50)},
		{read: at(2, 40), want: at(1, 40)},
		{read: at(3, 20), want: at(1, 40)},
	} {
		if got := h.observe(n, step.read); got != step.want {
			t.Errorf("reading %d: the one before is %+v, want %+v", i, got, step.want)
		}
	}
	h.forget(n)
	if got := h.observe(n, at(4, 10)); got != (states.HealReading{}) {
		t.Errorf("after forget, the reading before is %+v, want none", got)
	}
}
