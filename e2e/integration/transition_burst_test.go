package integration

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/fsm"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/states"
)

// TestTransitionLogBurst announces 1,000 transitions on one GlusterCluster
// through the operator's own TransitionLog, at the operator's default API
// rate, within a minute, and checks that `anthill transitions` lists all
// of them, in order, and that `anthill transitions -f`, started before the
// burst, printed the same.
func TestTransitionLogBurst(t *testing.T) {
	const n = 1000
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := framework.AnthillBinary.For(t)
	cli := cliRunner{bin: bin}
	kc := "--kubeconfig=" + env.Kubeconfig
	ns := env.Namespace(t)
	var cluster operatorv1alpha1.GlusterCluster
	loadSample(t, "glustercluster.yaml", &cluster)
	created, err := operatorClient(t).OperatorV1alpha1().GlusterClusters(ns).Create(ctx, &cluster, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	var follow, followErr lockedBuffer
	cmd := exec.CommandContext(ctx, bin, "transitions", "-f", "-n", ns, kc)
	cmd.Stdout, cmd.Stderr = &follow, &followErr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	tlog := operatorRecorder(t)
	pair := [2]fsm.State{"Healthy", "HealPending"}
	start := time.Now()
	for i := range n {
		from, to := pair[i%2], pair[(i+1)%2]
		tlog.Announce(created, engine.Committed{
			Machine: states.HealMachine, Namespace: ns, Name: created.Name, Subject: "vol1",
			From: from, To: to, Event: fsm.Event("healChanged"), Reason: "HealChanged",
			Message: fmt.Sprintf("transition %04d", i), Time: time.Now(),
		})
	}
	took := time.Since(start)
	t.Logf("announced %d transitions in %s", n, took.Round(time.Millisecond))
	if took > time.Minute {
		t.Errorf("the burst took %s, want it within a minute", took)
	}

	inOrder := func(what, out string) {
		t.Helper()
		var lines []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if strings.Contains(l, "(healChanged)") {
				lines = append(lines, l)
			}
		}
		if len(lines) != n {
			t.Fatalf("%s printed %d transitions, want %d:\n%s", what, len(lines), n, out)
		}
		for i, l := range lines {
			if !strings.HasSuffix(l, fmt.Sprintf("HealChanged: transition %04d", i)) {
				t.Fatalf("%s: transition %d is out of order: %q", what, i, l)
			}
		}
		if strings.Contains(out, "(x") || strings.Contains(out, "combined from similar events") || strings.Contains(out, engine.ReasonTransitionLogLimited) {
			t.Errorf("%s shows folded or limited transitions:\n%s", what, out)
		}
	}
	r := cli.run(ctx, nil, "transitions", created.Name, "-n", ns, kc)
	if r.err != nil {
		t.Fatalf("anthill transitions: %s", r)
	}
	inOrder("anthill transitions", r.stdout)

	err = framework.WaitFor(ctx, time.Minute, func(context.Context) (bool, error) {
		return strings.Count(follow.String(), "(healChanged)") >= n, nil
	})
	if err != nil {
		t.Fatalf("anthill transitions -f: %v; printed %d\nstderr:\n%s", err, strings.Count(follow.String(), "(healChanged)"), followErr.String())
	}
	inOrder("anthill transitions -f", follow.String())
}
