package objects

import (
	"testing"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

func TestMaxParallelMoves(t *testing.T) {
	with := func(p *operatorv1alpha1.DrainPolicy) *operatorv1alpha1.GlusterCluster {
		return &operatorv1alpha1.GlusterCluster{Spec: operatorv1alpha1.GlusterClusterSpec{DrainPolicy: p}}
	}
	cases := []struct {
		name string
		c    *operatorv1alpha1.GlusterCluster
		want int
	}{
		{"a cluster without a drain policy moves one brick at a time", with(nil), 1},
		{"a drain policy without the field moves one brick at a time", with(&operatorv1alpha1.DrainPolicy{}), 1},
		{"a negative value never seen by defaulting counts as one", with(&operatorv1alpha1.DrainPolicy{MaxParallelMoves: -3}), 1},
		{"the value set is the bound", with(&operatorv1alpha1.DrainPolicy{MaxParallelMoves: 12}), 12},
		{"no cluster at all moves one brick at a time", nil, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := MaxParallelMoves(tc.c); got != tc.want {
				t.Fatalf("MaxParallelMoves = %d, want %d", got, tc.want)
			}
		})
	}
}
