package objects

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestLostNodeTolerations(t *testing.T) {
	short := ptr.To(LostNodeTolerationSeconds)
	own := corev1.Toleration{Key: taintUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](900)}
	cases := []struct {
		name string
		in   []corev1.Toleration
		want map[string]*int64 // taint key → tolerationSeconds of the toleration that covers it
	}{
		{name: "a pod without tolerations gets both, shorter than Kubernetes' 300 s default",
			want: map[string]*int64{taintNotReady: short, taintUnreachable: short}},
		{name: "the admin's own toleration of one taint wins; the other is added",
			in:   []corev1.Toleration{own},
			want: map[string]*int64{taintNotReady: short, taintUnreachable: ptr.To[int64](900)}},
		{name: "a toleration of every taint covers both and nothing is added",
			in:   []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			want: map[string]*int64{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := lostNodeTolerations(append([]corev1.Toleration(nil), tc.in...))
			if len(got) != len(tc.in)+len(tc.want)-countKeys(tc.in, tc.want) {
				t.Fatalf("tolerations %+v", got)
			}
			for key, secs := range tc.want {
				found := false
				for _, tol := range got {
					if tol.Key == key && tol.Effect == corev1.TaintEffectNoExecute {
						found = true
						if *tol.TolerationSeconds != *secs {
							t.Errorf("%s tolerated for %d s, want %d", key, *tol.TolerationSeconds, *secs)
						}
					}
				}
				if !found {
					t.Errorf("no NoExecute toleration of %s in %+v", key, got)
				}
			}
		})
	}
}

func countKeys(in []corev1.Toleration, want map[string]*int64) int {
	n := 0
	for _, t := range in {
		if _, ok := want[t.Key]; ok {
			n++
		}
	}
	return n
}
