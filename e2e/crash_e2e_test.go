//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/gd2/sim"
)

// The crash sweep (issue 17, "a crash at every transition"): the lifecycle
// of runLifecycle, fault-free — create, decommission with brick moves and
// a replacement node, upgrade, delete — run once to record its transition
// sequence from the operator's log, then again for each chosen k with the
// operator killed by SIGKILL the moment the k-th transition's line appears
// in its output, and started again at once. Every run must end where the
// recorded one did, send no replace-brick or peer delete again for a
// target it had already succeeded on, and leave the simulator with no
// violation. See docs/testing.md#the-crash-sweep.

// transitionLine is the operator's JSON line for one transition.
type transitionLine struct {
	Msg       string `json:"msg"`
	Machine   string `json:"machine"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Subject   string `json:"subject"`
	From      string `json:"from"`
	To        string `json:"to"`
	Event     string `json:"event"`
	// TS is when the line was written (zap's ISO 8601 time).
	TS time.Time `json:"ts"`
}

func (l transitionLine) String() string {
	name := l.Name
	if l.Subject != "" {
		name += "/" + l.Subject
	}
	return fmt.Sprintf("%s %s: %s -> %s (%s)", l.Machine, name, l.From, l.To, l.Event)
}

// parseTransition returns the transition a log line announces, if it does.
func parseTransition(line []byte) (transitionLine, bool) {
	var l transitionLine
	if !bytes.Contains(line, []byte(`"msg":"transition"`)) || json.Unmarshal(line, &l) != nil || l.Msg != "transition" {
		return l, false
	}
	return l, true
}

// transitionsIn is the sequence of transitions the operator logged for
// namespace ns, in log order (every run of the operator, oldest first).
func transitionsIn(logs, ns string) []transitionLine {
	var out []transitionLine
	for _, line := range strings.Split(logs, "\n") {
		if l, ok := parseTransition([]byte(line)); ok && l.Namespace == ns {
			out = append(out, l)
		}
	}
	return out
}

// crashPoint names the transition after which a run kills the operator:
// the occurrence-th line (from 1) of the run's namespace that matches every
// field set. The recorded sequence gives each k a point with every field
// set, so that a run whose machines interleave differently still dies
// after the same step; a fixed point may name fewer (the first "detach" of
// any node is the decommissioned node's).
type crashPoint struct {
	Machine, Name, Subject, From, To, Event string
	Occurrence                              int
}

// String names the point as the summary shows one never reached.
func (p crashPoint) String() string {
	var parts []string
	for _, f := range []string{p.Machine, p.Name, p.Subject} {
		if f != "" {
			parts = append(parts, f)
		}
	}
	s := strings.Join(parts, " ")
	if p.From != "" || p.To != "" {
		s += fmt.Sprintf(": %s -> %s", p.From, p.To)
	}
	return fmt.Sprintf("%s (%s) #%d", s, p.Event, p.Occurrence)
}

func (p crashPoint) matches(l transitionLine) bool {
	for _, f := range [][2]string{{p.Machine, l.Machine}, {p.Name, l.Name}, {p.Subject, l.Subject}, {p.From, l.From}, {p.To, l.To}, {p.Event, l.Event}} {
		if f[0] != "" && f[0] != f[1] {
			return false
		}
	}
	return true
}

// pointAt is the crash point of the k-th (from 1) transition of seq.
func pointAt(seq []transitionLine, k int) crashPoint {
	l := seq[k-1]
	p := crashPoint{Machine: l.Machine, Name: l.Name, Subject: l.Subject, From: l.From, To: l.To, Event: l.Event}
	if l.Machine == "node" {
		// GlusterNode names are generated (<cluster>-<template>-<random>):
		// a node's transition is known by its place among its kind.
		p.Name = ""
	}
	for _, e := range seq[:k] {
		if p.matches(e) {
			p.Occurrence++
		}
	}
	return p
}

// destructiveEvents are the node events whose next step destroys or moves
// something: drain (moveBrick follows), detach (deletePeer), remove
// (deleteWorkload) and restart (rollWorkload stops the pod). A kill right
// after one of them is the moment a resumed operator could repeat or skip
// the step; the sweep's sample always includes each of them.
var destructiveEvents = map[string]bool{"drain": true, "detach": true, "remove": true, "restart": true}

// destructive reports whether l is a transition the sample always
// includes: a destructive node event, or a heal machine leaving Healthy
// (what a brick move, a replacement's heal backlog, causes).
func destructive(l transitionLine) bool {
	return l.Machine == "node" && destructiveEvents[l.Event] || l.Machine == "heal" && l.From == "Healthy"
}

// crashOutcome is what one run of the crash scenario ended with.
type crashOutcome struct {
	// ns is the run's namespace.
	ns string
	// endState summarises where the run ended; every run must end in the
	// recorded run's.
	endState string
	// killed is the transition the operator was killed after and position
	// its place (from 1) in the run's own sequence; empty when the point
	// was never reached.
	killed   string
	position int
	// transitions is the run's transition count.
	transitions int
	// resumed is the time from the killed transition to the next one of
	// the run: how long the restarted operator took to make progress.
	resumed time.Duration
	took    time.Duration
}

// runCrashScenario runs the fault-free lifecycle in a new namespace,
// killing the operator after point (nil: never) and starting it again at
// once. It fails t if any phase does not converge, on any simulator
// violation, and on any replace-brick or peer delete sent again after it
// had succeeded.
func runCrashScenario(t *testing.T, point *crashPoint) crashOutcome {
	t.Helper()
	start := time.Now()
	ns := newNamespace(t)
	out := crashOutcome{ns: ns}
	// settle stops watching for the crash point and waits for a restart
	// under way; after it, out.killed and out.position are safe to read.
	settle := func() {}
	if point != nil {
		seen, matched := 0, 0
		position := 0
		fired, disarm := operatorOf(t).KillOnLine(func(line []byte) bool {
			l, ok := parseTransition(line)
			if !ok || l.Namespace != ns {
				return false
			}
			seen++
			if !point.matches(l) {
				return false
			}
			matched++
			if matched == point.Occurrence {
				position = seen
				return true
			}
			return false
		})
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			select {
			case line := <-fired:
				// The run is dead already; Kill returns once it has been
				// reaped.
				operatorOf(t).Kill()
				if err := operatorOf(t).Start(); err != nil {
					t.Errorf("restart the operator: %v", err)
				}
				if l, ok := parseTransition([]byte(line)); ok {
					out.killed = l.String()
					out.position = position
				}
			case <-done:
			}
		})
		var once sync.Once
		settle = func() {
			once.Do(func() {
				disarm()
				close(done)
				wg.Wait()
				// A run that failed between the kill and the restart must
				// not leave the next test without an operator.
				if exited, _ := operatorOf(t).Exited(); exited {
					_ = operatorOf(t).Start()
				}
			})
		}
		t.Cleanup(settle)
	}
	l := newLifecycleIn(t, ns, "crash", sim.Faults{})
	l.decommission()
	decommissioned := l.nodeSummary()
	l.upgrade()
	upgraded := l.nodeSummary()
	l.deleteCluster()
	settle()
	calls := simOf(t).DestructiveCalls()
	for _, r := range sim.RepeatedDestructiveCalls(calls) {
		t.Errorf("%s of %s sent again at %s after it succeeded at %s", r.Again.Op, r.Again.Target, r.Again.Time.Format(time.RFC3339Nano), r.First.Time.Format(time.RFC3339Nano))
	}
	done := sim.SucceededDestructiveCalls(calls)
	if done["ReplaceBrick"] != l.bricks {
		t.Errorf("%d replace-brick(s) succeeded for %d brick(s) of the decommissioned node", done["ReplaceBrick"], l.bricks)
	}
	out.endState = fmt.Sprintf("after the decommission %s; after the upgrade %s; at the end %s; %d brick(s) replaced, %d peer(s) deleted",
		decommissioned, upgraded, l.leftovers(), done["ReplaceBrick"], done["DeletePeer"])
	seq := transitionsIn(operatorOf(t).Logs(), ns)
	out.transitions = len(seq)
	if out.position > 0 && out.position < len(seq) {
		out.resumed = seq[out.position].TS.Sub(seq[out.position-1].TS)
	}
	out.took = time.Since(start)
	return out
}

// nodeSummary is "zone=State@version" for every node of the cluster,
// sorted (node names are generated, so they differ from run to run).
func (l *lifecycle) nodeSummary() string {
	l.t.Helper()
	nodes, err := framework.ClusterNodes(context.Background(), anthill, l.ns, l.name)
	if err != nil {
		l.t.Fatal(err)
	}
	var parts []string
	for _, n := range nodes {
		parts = append(parts, n.Spec.Zone+"="+n.Status.State+"@"+n.Status.Version)
	}
	sort.Strings(parts)
	return "[" + strings.Join(parts, " ") + "]"
}

// leftovers counts what is left of a deleted cluster: GlusterNodes, pods
// and claims in its namespace.
func (l *lifecycle) leftovers() string {
	l.t.Helper()
	ctx := context.Background()
	var n, pods, pvcs int
	err := framework.WaitFor(ctx, 2*time.Minute, func(ctx context.Context) (bool, error) {
		gn, err := anthill.OperatorV1alpha1().GlusterNodes(l.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		p, err := env.Client.CoreV1().Pods(l.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		c, err := env.Client.CoreV1().PersistentVolumeClaims(l.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		n, pods, pvcs = len(gn.Items), len(p.Items), len(c.Items)
		return n+pods+pvcs == 0, fmt.Errorf("%d GlusterNodes, %d pods, %d claims left", n, pods, pvcs)
	})
	if err != nil {
		l.t.Errorf("after the cluster's deletion: %v", err)
	}
	return fmt.Sprintf("%d GlusterNodes, %d pods, %d claims", n, pods, pvcs)
}

// crashRow is one line of the sweep's summary.
type crashRow struct {
	k          int
	transition string
	result     string
	took       time.Duration
}

func printCrashSummary(t *testing.T, rows []crashRow) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "crash sweep: %d run(s)\n%-5s  %-60s  %-9s  %s\n", len(rows), "k", "transition", "duration", "result")
	for _, r := range rows {
		k := strconv.Itoa(r.k)
		if r.k == 0 {
			k = "-"
		}
		fmt.Fprintf(&b, "%-5s  %-60s  %-9s  %s\n", k, r.transition, r.took.Round(time.Second), r.result)
	}
	t.Log("\n" + b.String())
	fmt.Print(b.String())
}

// runCrashPoints runs one crash scenario per point as subtests (named by
// their k, or by the point when k is 0) and returns the summary rows. want
// is the recorded end state ("" to take the first run's).
func runCrashPoints(t *testing.T, want string, ks []int, points []crashPoint) []crashRow {
	rows := make([]crashRow, len(points))
	outs := make([]crashOutcome, len(points))
	oks := make([]bool, len(points))
	// The runs go side by side (each in a place, before the tests still
	// waiting for theirs), each in its own namespace with its own operator
	// and simulator; "runs" returns when all have ended.
	t.Run("runs", func(t *testing.T) {
		for i, p := range points {
			name := fmt.Sprintf("k=%d", ks[i])
			if ks[i] == 0 {
				name = fmt.Sprintf("%s_%s_%d", p.Machine, p.Event, p.Occurrence)
			}
			rows[i] = crashRow{k: ks[i], transition: p.String()}
			t.Run(name, func(t *testing.T) {
				besideSub(t)
				start := time.Now()
				defer func() { rows[i].took, oks[i] = time.Since(start), !t.Failed() }()
				growLocalStorage(t)
				outs[i] = runCrashScenario(t, &p)
				if outs[i].killed == "" {
					t.Logf("the run never reached %s; nothing was killed", rows[i].transition)
				}
			})
		}
	})
	// Every run that killed the operator ends where the recorded run did
	// (or, without one, where the first such run did).
	for i := range points {
		out := outs[i]
		switch {
		case !oks[i]:
			rows[i].result = "FAIL"
			continue
		case out.killed == "":
			rows[i].result = "not reached"
			continue
		case want == "":
			want = out.endState
		case out.endState != want:
			rows[i].result = "FAIL"
			t.Errorf("%s: the run ended in\n  %s\nthe recorded run in\n  %s", rows[i].transition, out.endState, want)
			continue
		}
		rows[i].transition = out.killed
		rows[i].result = fmt.Sprintf("ok (killed at %d of %d, next transition %s later)", out.position, out.transitions, out.resumed.Round(100*time.Millisecond))
	}
	return rows
}

// growLocalStorage adds local PVs as the sweep uses them up: every run
// takes seven brick PVs (six nodes and a replacement) and the etcd's, and
// retained PVs are never reused. TestMain made 40 per node, of which the
// rest of the suite uses about 20.
var (
	localPVsMu sync.Mutex
	localPVs   = 40
	localRuns  int
)

func growLocalStorage(t *testing.T) {
	t.Helper()
	localPVsMu.Lock()
	defer localPVsMu.Unlock()
	localRuns++
	// Two of each kind per node per run leaves room: the runs spread seven
	// brick PVs over six nodes.
	if need := 20 + 2*localRuns; need > localPVs {
		if err := env.CreateLocalStorageRange(context.Background(), localPVs, need+20, "100Gi"); err != nil {
			t.Fatal(err)
		}
		localPVs = need + 20
	}
}

// TestCrashAtDestructiveTransitions is the crash sweep's fixed subset in
// the e2e suite: the operator is killed right after the decommissioned
// node enters Draining (before its first brick move), right after it
// enters Detaching (before its peer is deleted), and right after the
// upgrade's first node enters Restarting (before its pod is rolled). Each
// run must finish the lifecycle in the same end state as the others, with
// every brick moved once, every peer deleted once and no violation. `make chaos` runs the whole sweep (TestCrashSweep).
func TestCrashAtDestructiveTransitions(t *testing.T) {
	sideBySideOfSubtests(t)
	points := []crashPoint{
		{Machine: "node", Event: "drain", Occurrence: 1},
		{Machine: "node", Event: "detach", Occurrence: 1},
		{Machine: "node", Event: "restart", Occurrence: 1},
	}
	rows := runCrashPoints(t, "", make([]int, len(points)), points)
	printCrashSummary(t, rows)
}

// TestCrashSweep is the whole sweep, run by `make chaos` (it is skipped
// otherwise): the lifecycle fault-free to record its transitions, then one
// run per chosen k. ANTHILL_CRASH_K chooses: "all" (every k; make chaos's
// default), "sample" (the default here: every transition that precedes a
// destructive step, see destructive, plus every ANTHILL_CRASH_EVERY-th,
// default 5), or a list such as "3,17,40".
func TestCrashSweep(t *testing.T) {
	alone(t, "make chaos runs it alone")
	if os.Getenv("ANTHILL_CRASH_SWEEP") == "" {
		t.Skip("the crash sweep runs with make chaos (ANTHILL_CRASH_SWEEP=1)")
	}
	var ref crashOutcome
	var seq []transitionLine
	start := time.Now()
	if !t.Run("recorded", func(t *testing.T) {
		growLocalStorage(t)
		ref = runCrashScenario(t, nil)
		seq = transitionsIn(operatorOf(t).Logs(), ref.ns)
	}) {
		t.Fatal("the fault-free run failed; no sweep")
	}
	t.Logf("recorded %d transitions in %s; end state: %s", len(seq), time.Since(start).Round(time.Second), ref.endState)
	for i, l := range seq {
		t.Logf("%4d  %s", i+1, l)
	}
	ks, err := chooseCrashKs(seq, os.Getenv("ANTHILL_CRASH_K"), os.Getenv("ANTHILL_CRASH_EVERY"))
	if err != nil {
		t.Fatal(err)
	}
	points := make([]crashPoint, len(ks))
	for i, k := range ks {
		points[i] = pointAt(seq, k)
	}
	rows := append([]crashRow{{transition: fmt.Sprintf("(fault-free, %d transitions)", len(seq)), result: "recorded", took: time.Since(start)}},
		runCrashPoints(t, ref.endState, ks, points)...)
	printCrashSummary(t, rows)
}

// chooseCrashKs picks the ks of the sweep from the recorded sequence (see
// TestCrashSweep for the modes).
func chooseCrashKs(seq []transitionLine, mode, every string) ([]int, error) {
	switch mode {
	case "all":
		ks := make([]int, len(seq))
		for i := range ks {
			ks[i] = i + 1
		}
		return ks, nil
	case "", "sample":
		n := 5
		if every != "" {
			v, err := strconv.Atoi(every)
			if err != nil || v < 1 {
				return nil, fmt.Errorf("ANTHILL_CRASH_EVERY=%q: want a positive number", every)
			}
			n = v
		}
		var ks []int
		for i, l := range seq {
			if k := i + 1; destructive(l) || k%n == 0 {
				ks = append(ks, k)
			}
		}
		return ks, nil
	}
	var ks []int
	for _, f := range strings.Split(mode, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k < 1 || k > len(seq) {
			return nil, fmt.Errorf("ANTHILL_CRASH_K: %q is not a k in 1..%d", f, len(seq))
		}
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return slices.Compact(ks), nil
}
