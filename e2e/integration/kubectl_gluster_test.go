package integration

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/fsm"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

// TestKubectlGluster runs the plugin binary against the real API server
// for what scripts rely on: -o json that decodes, kubectl's --context, and
// a decommission that changes nothing unless confirmed.
func TestKubectlGluster(t *testing.T) {
	ctx, cli, kc, ns, ac, createdCluster, createdNode := newCLIFixture(t)

	t.Run("status -o json is a List of the cluster and its nodes", func(t *testing.T) {
		r := cli.run(ctx, nil, "status", createdCluster.Name, "-n", ns, kc, "-o", "json")
		if r.err != nil {
			t.Fatalf("status -o json: %s", r)
		}
		var list struct {
			APIVersion string            `json:"apiVersion"`
			Kind       string            `json:"kind"`
			Items      []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
			t.Fatalf("decode: %v\n%s", err, r.stdout)
		}
		if list.APIVersion != "v1" || list.Kind != "List" || len(list.Items) != 2 {
			t.Fatalf("got %s %s with %d items, want a v1 List of 2", list.APIVersion, list.Kind, len(list.Items))
		}
		var c operatorv1alpha1.GlusterCluster
		var n operatorv1alpha1.GlusterNode
		if err := json.Unmarshal(list.Items[0], &c); err != nil || c.Kind != "GlusterCluster" || c.Name != createdCluster.Name || c.UID != createdCluster.UID {
			t.Errorf("item 0 = %s %s (%v), want the GlusterCluster %s", c.Kind, c.Name, err, createdCluster.Name)
		}
		if err := json.Unmarshal(list.Items[1], &n); err != nil || n.Kind != "GlusterNode" || n.Name != createdNode.Name || n.APIVersion != operatorv1alpha1.SchemeGroupVersion.String() {
			t.Errorf("item 1 = %s %s %s (%v), want the GlusterNode %s", n.APIVersion, n.Kind, n.Name, err, createdNode.Name)
		}
	})

	t.Run("transitions -o json is one decodable record per transition", func(t *testing.T) {
		tlog := operatorRecorder(t)
		tlog.Announce(createdNode, engine.Committed{
			Machine: states.NodeMachine, Namespace: ns, Name: createdNode.Name,
			From: fsm.State("Online"), To: fsm.State("Maintenance"), Event: fsm.Event("requestMaintenance"),
			Reason: "MaintenanceRequested", Message: "admin request", Time: time.Now(),
		})
		tlog.Announce(createdCluster, engine.Committed{
			Machine: states.HealMachine, Namespace: ns, Name: createdCluster.Name, Subject: "vol1",
			From: fsm.State("Healthy"), To: fsm.State("HealPending"), Event: fsm.Event("healNeeded"),
			Reason: "HealNeeded", Message: "3 entries", Time: time.Now(),
		})
		type record struct {
			Time                                                     time.Time
			Namespace, Kind, Name, Machine, Subject, From, To, Event string
			Reason, Message                                          string
		}
		var records []record
		var last cliResult
		err := framework.WaitFor(ctx, time.Minute, func(ctx context.Context) (bool, error) {
			last = cli.run(ctx, nil, "transitions", createdCluster.Name, "-n", ns, kc, "-o", "json")
			if last.err != nil {
				return false, errors.New(last.String())
			}
			records = nil
			dec := json.NewDecoder(strings.NewReader(last.stdout))
			for {
				var rec record
				err := dec.Decode(&rec)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					return false, err
				}
				records = append(records, rec)
			}
			return len(records) >= 2, nil
		})
		if err != nil {
			t.Fatalf("%v\nlast run: %s", err, last)
		}
		want := map[string]record{
			"node": {Namespace: ns, Kind: "GlusterNode", Name: createdNode.Name, Machine: "node", From: "Online", To: "Maintenance", Event: "requestMaintenance", Reason: "MaintenanceRequested", Message: "admin request"},
			"heal": {Namespace: ns, Kind: "GlusterCluster", Name: createdCluster.Name, Machine: "heal", Subject: "vol1", From: "Healthy", To: "HealPending", Event: "healNeeded", Reason: "HealNeeded", Message: "3 entries"},
		}
		for _, got := range records {
			w, ok := want[got.Machine]
			if !ok {
				t.Errorf("unexpected record %+v", got)
				continue
			}
			if got.Time.IsZero() || time.Since(got.Time) > 5*time.Minute {
				t.Errorf("record %+v has no recent time", got)
			}
			got.Time = time.Time{}
			if got != w {
				t.Errorf("record\n%+v\nwant\n%+v", got, w)
			}
			delete(want, got.Machine)
		}
		if len(want) > 0 {
			t.Errorf("records lack %v:\n%s", want, last.stdout)
		}
	})

	t.Run("--context selects the other context of a two-context kubeconfig", func(t *testing.T) {
		cfg, err := clientcmd.LoadFromFile(env.Kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		real := cfg.CurrentContext
		// The real context gets the test's namespace, so no -n is needed;
		// the current context is one whose API server does not answer.
		cfg.Contexts[real].Namespace = ns
		cfg.Clusters["nowhere"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1"}
		cfg.Contexts["nowhere"] = &clientcmdapi.Context{Cluster: "nowhere", AuthInfo: cfg.Contexts[real].AuthInfo}
		cfg.CurrentContext = "nowhere"
		path := filepath.Join(t.TempDir(), "kubeconfig")
		if err := clientcmd.WriteToFile(*cfg, path); err != nil {
			t.Fatal(err)
		}
		r := cli.run(ctx, nil, "status", createdCluster.Name, "--kubeconfig", path, "--context", real)
		if r.err != nil || !strings.Contains(r.stdout, "GlusterCluster "+ns+"/"+createdCluster.Name) {
			t.Errorf("status --context %s: %s", real, r)
		}
		r = cli.run(ctx, nil, "status", createdCluster.Name, "--kubeconfig", path, "--request-timeout", "5s")
		var exit *exec.ExitError
		if !errors.As(r.err, &exit) || exit.ExitCode() != 1 || !strings.Contains(r.stderr, "127.0.0.1:1") || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("status on the current context (nowhere) should fail in one line naming its server: %s", r)
		}
		// kubectl's --cluster overrides the context's cluster the same way.
		r = cli.run(ctx, nil, "status", createdCluster.Name, "--kubeconfig", path, "--context", real, "--cluster", "nowhere", "--request-timeout", "5s")
		if r.err == nil || !strings.Contains(r.stderr, "127.0.0.1:1") {
			t.Errorf("--cluster nowhere should send the request to nowhere: %s", r)
		}
	})

	t.Run("decommission shows the plan, asks, and does nothing on no", func(t *testing.T) {
		before, err := ac.GlusterNodes(ns).Get(ctx, createdNode.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, answer := range []string{"n\n", "\n", ""} {
			r := cli.runInput(ctx, nil, answer, "node", "decommission", createdNode.Name, "-n", ns, kc)
			var exit *exec.ExitError
			if !errors.As(r.err, &exit) || exit.ExitCode() != 1 {
				t.Errorf("answer %q: want exit 1: %s", answer, r)
			}
			for _, want := range []string{
				"Plan: decommission GlusterNode " + ns + "/" + createdNode.Name + " (cluster " + createdCluster.Name,
				"Draining: each brick on the node is moved",
				"Left in cluster " + createdCluster.Name + ": 0 nodes",
				// No GD2 answers here: the plan says so rather than guess.
				"Bricks: GD2 is not reachable from here",
			} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("answer %q: the plan lacks %q:\n%s", answer, want, r.stdout)
				}
			}
			if !strings.Contains(r.stderr, "Decommission GlusterNode "+ns+"/"+createdNode.Name+"? [y/N]: ") || !strings.Contains(r.stderr, "error: not confirmed; nothing changed") {
				t.Errorf("answer %q: stderr lacks the question or the refusal: %s", answer, r)
			}
		}
		after, err := ac.GlusterNodes(ns).Get(ctx, createdNode.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if after.ResourceVersion != before.ResourceVersion || after.Annotations[objects.AnnotationRequest] != "" {
			t.Errorf("the node changed (resourceVersion %s -> %s, annotations %v)", before.ResourceVersion, after.ResourceVersion, after.Annotations)
		}

		r := cli.runInput(ctx, nil, "y\n", "node", "decommission", createdNode.Name, "-n", ns, kc, "-o", "json")
		if r.err != nil {
			t.Fatalf("decommission answered y: %s", r)
		}
		// With -o json stdout is the node alone; the plan went to stderr.
		var got operatorv1alpha1.GlusterNode
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || got.Annotations[objects.AnnotationRequest] != objects.RequestDecommission || got.Kind != "GlusterNode" {
			t.Errorf("decommission -o json answered y should print the annotated node (%v): %s", err, r)
		}
		if !strings.Contains(r.stderr, "Plan: decommission") {
			t.Errorf("the plan should be on stderr with -o json: %s", r)
		}
	})
}
