package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spf13/cobra"

	"github.com/gluster/anthill/cmd/internal/cli"
	"github.com/gluster/anthill/fsm"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
	"github.com/gluster/anthill/kube/machines"
	"github.com/gluster/anthill/states"
)

// explanation is what `anthill explain` prints (and, with -o json,
// encodes). What the object waits for is the operator's last decision as
// persisted in status (the message and conditions its runner wrote), and
// the decision its sync would take now (Live): the operator's own gather
// and decide functions over live reads (machines.LiveNodeDecision,
// machines.LiveClusterDecision). What leaves the state comes from the
// machine's definition, the same data the operator builds its machines
// from.
type explanation struct {
	Kind      string     `json:"kind"`
	Namespace string     `json:"namespace"`
	Name      string     `json:"name"`
	Machine   string     `json:"machine"`
	State     string     `json:"state"`
	Since     *time.Time `json:"since,omitempty"`
	Waiting   string     `json:"waitingFor,omitempty"`
	// Persisted is the machine's last decision as its sync wrote it.
	Persisted explainPersisted `json:"persisted"`
	// Live is the decision the machine's sync would take now; nil when
	// it was not asked for (--live=false).
	Live       *explainLive       `json:"live,omitempty"`
	Conditions []explainCondition `json:"conditions,omitempty"`
	Next       []explainExit      `json:"next,omitempty"`
	// Blockers lists, for a cluster, what keeps it from Ready and idle,
	// deepest first.
	Blockers []explainBlocker `json:"blockers,omitempty"`
	// SwitchedOff lists, for a cluster, the automations its
	// spec.automation switches off and what each holds now.
	SwitchedOff []explainSwitch `json:"switchedOff,omitempty"`
	History     []string        `json:"history,omitempty"`
	Ledger      []string        `json:"ledger,omitempty"`
}

// explainPersisted is the last decision as status holds it: the node's
// message, or the reason and message of the cluster's Ready condition.
type explainPersisted struct {
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// explainLive is a machines.LiveDecision as explain shows it.
type explainLive struct {
	// Known: the decision stands (GD2 was read, or the decision needs
	// none). When it is not, Unavailable says why and the persisted
	// decision is all there is.
	Known       bool   `json:"known"`
	Unavailable string `json:"unavailable,omitempty"`
	// GD2 is how GD2 was read: read, notNeeded or unavailable.
	GD2   string `json:"gd2,omitempty"`
	State string `json:"state,omitempty"`
	// Kind is event, step or wait; refused when the operator's runner
	// refuses the object before deciding (Refused says why).
	Kind  string `json:"kind,omitempty"`
	Event string `json:"event,omitempty"`
	Step  string `json:"step,omitempty"`
	// To is the event's target; When what fires it (the event's doc).
	To           string `json:"to,omitempty"`
	When         string `json:"when,omitempty"`
	Reason       string `json:"reason,omitempty"`
	Message      string `json:"message,omitempty"`
	RequeueAfter string `json:"requeueAfter,omitempty"`
	Warning      bool   `json:"warning,omitempty"`
	// Refused says why the operator's runner would refuse the decision.
	Refused string `json:"refused,omitempty"`
}

type explainCondition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`
}

type explainExit struct {
	Event string `json:"event"`
	To    string `json:"to"`
	When  string `json:"when"`
}

type explainBlocker struct {
	Object  string `json:"object"`
	State   string `json:"state"`
	Message string `json:"message,omitempty"`
	depth   int
}

func (r *root) explainCommand() *cobra.Command {
	var history int
	var live bool
	cmd := &cobra.Command{
		Use:   "explain glustercluster/NAME|glusternode/NAME",
		Short: "explain a GlusterCluster or GlusterNode: state and since when, what it waits for (persisted and live), what leaves the state, the deepest blocker, recent transitions and ledger",
		Long: "Explains one GlusterCluster or GlusterNode: its machine's state and since when,\n" +
			"what it waits for (the operator's last decision, as persisted in status), the\n" +
			"decision the operator's sync would take now (its own gather and decide code over\n" +
			"live reads: the objects through your kubeconfig, GD2 through the cluster's\n" +
			"endpoint and auth Secret), the transitions that leave the state, for a cluster\n" +
			"the deepest blocker first, and the recent transitions and ledger entries.\n" +
			"-o json or -o yaml prints the same as one object, -o jsonpath=... a template over\n" +
			"it, -o name the object explained (KIND.GROUP/NAME).",
		Example: "  " + r.name + " explain glusternode/gluster-zone-1-abcde -n gluster\n  " + r.name + " explain glustercluster/gluster -n gluster -o json",
		Args:    exactArgs("KIND/NAME"),
	}
	cmd.Flags().IntVar(&history, "history", 5, "number of recent transitions and ledger entries to show")
	cmd.Flags().BoolVar(&live, "live", true, "also decide now from live reads, as the operator would (--live=false: the persisted decision only)")
	output := outputFlag(cmd, outputJSON, outputYAML, outputName, outputJSONPath)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if history < 0 {
			return cli.UsageError(fmt.Errorf("--history must not be negative, got %d", history))
		}
		kc, ac, ns, err := r.kube.clients()
		if err != nil {
			return err
		}
		e, err := explain(cmd.Context(), ac, ns, args[0], history)
		if err != nil {
			return err
		}
		if live {
			e.Live = decideLive(cmd.Context(), machines.LiveReads{Kube: kc, Anthill: ac, GD2Timeout: planGD2Timeout}, e)
		}
		switch *output {
		case "":
			return writeExplanation(r.out(), e, "text", time.Now())
		case outputJSON:
			return writeExplanation(r.out(), e, "json", time.Now())
		}
		return printData(r.out(), *output, e, objectRef{operatorv1alpha1.SchemeGroupVersion.String(), e.Kind, e.Name})
	}
	return cmd
}

// explain reads the object named by ref (KIND/NAME) and what explains it.
func explain(ctx context.Context, ac versioned.Interface, ns, ref string, history int) (explanation, error) {
	kind, name, ok := strings.Cut(ref, "/")
	if !ok || name == "" {
		return explanation{}, fmt.Errorf("%q is not KIND/NAME (glustercluster/NAME or glusternode/NAME)", ref)
	}
	client := ac.OperatorV1alpha1()
	switch strings.ToLower(kind) {
	case "glusternode", "glusternodes", "gn", "node":
		n, err := client.GlusterNodes(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return explanation{}, notFound(err, kindGlusterNode, ns, name)
		}
		var ledger []operatorv1alpha1.LedgerEntry
		if c, err := client.GlusterClusters(ns).Get(ctx, n.Spec.Cluster, metav1.GetOptions{}); err == nil {
			for _, l := range c.Status.Ledger {
				if l.Node == n.Name {
					ledger = append(ledger, l)
				}
			}
		}
		return explainNode(n, ledger, history), nil
	case "glustercluster", "glusterclusters", "gc", "cluster":
		c, err := client.GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return explanation{}, notFound(err, kindGlusterCluster, ns, name)
		}
		nodes, err := glusterNodes(ctx, ac, ns, name)
		if err != nil {
			return explanation{}, err
		}
		return explainCluster(c, nodes, history), nil
	}
	return explanation{}, fmt.Errorf("cannot explain kind %q: use glustercluster/NAME or glusternode/NAME", kind)
}

// decideLive is e's machine's decision now, from live reads.
func decideLive(ctx context.Context, r machines.LiveReads, e explanation) *explainLive {
	var d machines.LiveDecision
	var err error
	def := states.NodeDefinition()
	switch e.Kind {
	case kindGlusterNode:
		d, err = machines.LiveNodeDecision(ctx, r, e.Namespace, e.Name)
	default:
		def = states.ClusterDefinition()
		d, err = machines.LiveClusterDecision(ctx, r, e.Namespace, e.Name)
	}
	return liveOf(def, d, err)
}

// liveOf renders d (or why it could not be taken) for explain.
func liveOf(def *fsm.Definition, d machines.LiveDecision, err error) *explainLive {
	switch {
	case err != nil:
		return &explainLive{Unavailable: "cannot read what the decision reads: " + err.Error()}
	case !d.Known():
		return &explainLive{GD2: d.GD2, State: string(d.State), Unavailable: "GD2 cannot be read from here: " + d.GD2Error.Error()}
	}
	l := &explainLive{
		Known: true, GD2: d.GD2, State: string(d.State), Event: string(d.Decision.Event), Step: string(d.Decision.Step),
		Reason: d.Decision.Reason, Message: d.Decision.Message, Warning: d.Decision.Warning, Refused: d.Refused,
	}
	if d.Decision.RequeueAfter > 0 {
		l.RequeueAfter = d.Decision.RequeueAfter.String()
	}
	switch {
	case l.Refused != "" && l.Reason == "" && l.Event == "" && l.Step == "":
		l.Kind = "refused"
	case l.Event != "":
		l.Kind, l.To, l.When = "event", string(d.To), def.EventDocOf(d.Decision.Event)
	case l.Step != "":
		l.Kind = "step"
	default:
		l.Kind = "wait"
	}
	return l
}

func notFound(err error, kind, ns, name string) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("%s %q not found in namespace %s", kind, name, ns)
	}
	return fmt.Errorf("get %s %s/%s: %w", kind, ns, name, err)
}

// exits lists the events that leave state s of def, with where they go
// and when they fire (the event's documentation).
func exits(def *fsm.Definition, s fsm.State) []explainExit {
	var out []explainExit
	for _, e := range def.Exits(s) {
		to, _ := def.Target(e, s)
		out = append(out, explainExit{Event: string(e), To: string(to), When: def.EventDocOf(e)})
	}
	return out
}

func conditions(cs []metav1.Condition) []explainCondition {
	var out []explainCondition
	for _, c := range cs {
		out = append(out, explainCondition{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message})
	}
	return out
}

func lastN[T any](s []T, n int) []T { return s[max(0, len(s)-n):] }

func explainNode(n *operatorv1alpha1.GlusterNode, ledger []operatorv1alpha1.LedgerEntry, history int) explanation {
	def := states.NodeDefinition()
	state := fsm.State(n.Status.State)
	if state == "" {
		state = def.Initial
	}
	e := explanation{
		Kind: kindGlusterNode, Namespace: n.Namespace, Name: n.Name, Machine: states.NodeMachine, State: string(state),
		Waiting: n.Status.Message, Persisted: explainPersisted{Message: n.Status.Message},
		Conditions: conditions(n.Status.Conditions), Next: exits(def, state),
	}
	if t := n.Status.LastTransitionTime; t != nil {
		e.Since = &t.Time
	}
	for _, r := range lastN(n.Status.History, history) {
		e.History = append(e.History, formatTransition(historyLine(kindGlusterNode, n.Namespace, n.Name, states.NodeMachine, r), false))
	}
	for _, l := range lastN(ledger, history) {
		e.Ledger = append(e.Ledger, formatLedgerEntry(l))
	}
	return e
}

// blockerDepth ranks what keeps a cluster from Ready and idle: the lower,
// the deeper (the more other things wait for it).
func blockerDepth(kind string, s fsm.State) int {
	switch {
	case kind == "volume" && s == states.HealSplitBrain:
		return 0
	case kind == "node" && s == states.NodeFailed:
		return 1
	case kind == "upgrade" && s == states.UpgradeBlocked:
		return 2
	case kind == "volume" && s == states.HealUnknown:
		return 3
	case kind == "node" && s == states.NodeOffline:
		return 4
	case kind == "volume":
		// A pending heal is what drains and upgrade steps wait for.
		return 5
	case kind == "node" && (s == states.NodeDraining || s == states.NodeDetaching || s == states.NodeAbandoned || s == states.NodeDeleting):
		return 6
	case kind == "upgrade":
		return 7
	}
	return 8
}

func explainCluster(c *operatorv1alpha1.GlusterCluster, nodes []operatorv1alpha1.GlusterNode, history int) explanation {
	def := states.ClusterDefinition()
	phase := fsm.State(c.Status.Phase)
	if phase == "" {
		phase = def.Initial
	}
	e := explanation{
		Kind: kindGlusterCluster, Namespace: c.Namespace, Name: c.Name, Machine: states.ClusterMachine, State: string(phase),
		Conditions: conditions(c.Status.Conditions), Next: exits(def, phase),
	}
	if ready := apimeta.FindStatusCondition(c.Status.Conditions, operatorv1alpha1.ConditionReady); ready != nil {
		e.Persisted = explainPersisted{Reason: ready.Reason, Message: ready.Message}
	}
	var bs []explainBlocker
	for _, v := range c.Status.Volumes {
		if s := fsm.State(v.State); s != "" && s != states.HealHealthy {
			bs = append(bs, explainBlocker{Object: "volume/" + v.Name, State: v.State, Message: v.Message, depth: blockerDepth("volume", s)})
		}
	}
	if u := c.Status.Upgrade; u != nil && u.State != "" && fsm.State(u.State) != states.UpgradeIdle && fsm.State(u.State) != states.UpgradeComplete {
		bs = append(bs, explainBlocker{Object: "upgrade", State: u.State, Message: u.Message, depth: blockerDepth("upgrade", fsm.State(u.State))})
	}
	for _, n := range nodes {
		if s := fsm.State(n.Status.State); s != states.NodeOnline {
			if s == "" {
				s = states.NodeDefinition().Initial
			}
			bs = append(bs, explainBlocker{Object: "glusternode/" + n.Name, State: string(s), Message: n.Status.Message, depth: blockerDepth("node", s)})
		}
	}
	sort.SliceStable(bs, func(i, j int) bool {
		if bs[i].depth != bs[j].depth {
			return bs[i].depth < bs[j].depth
		}
		return bs[i].Object < bs[j].Object
	})
	e.Blockers = bs
	e.SwitchedOff = switchedOff(c, nodes)
	if len(bs) > 0 {
		e.Waiting = bs[0].Object + " " + bs[0].State
		if bs[0].Message != "" {
			e.Waiting += ": " + bs[0].Message
		}
	}
	for _, l := range recentHistory(c, nodes, history) {
		e.History = append(e.History, formatTransition(l, false))
	}
	for _, l := range lastN(c.Status.Ledger, history) {
		e.Ledger = append(e.Ledger, formatLedgerEntry(l))
	}
	// The cluster phase's own entry time is its latest cluster transition.
	for i := len(c.Status.History) - 1; i >= 0; i-- {
		if r := c.Status.History[i]; (r.Machine == "" || r.Machine == states.ClusterMachine) && r.To == string(phase) {
			t := r.Time.Time
			e.Since = &t
			break
		}
	}
	return e
}

// writeDecisions writes the persisted decision and the live one beside it.
func writeDecisions(b *strings.Builder, e explanation) {
	// A node's Waiting line is its persisted message already.
	switch p := e.Persisted; {
	case p.Reason != "":
		fmt.Fprintf(b, "Persisted: %s: %s\n", p.Reason, orDash(p.Message))
	case p.Message != "" && p.Message != e.Waiting:
		fmt.Fprintf(b, "Persisted: %s\n", p.Message)
	}
	l := e.Live
	if l == nil {
		return
	}
	if !l.Known {
		fmt.Fprintf(b, "Live:      unknown: %s;\n           the persisted decision is the operator's last word\n", l.Unavailable)
		return
	}
	if l.Kind == "refused" {
		fmt.Fprintf(b, "Live:      refused by the operator's runner before deciding: %s\n", l.Refused)
		return
	}
	fmt.Fprintf(b, "Live:      %s", l.Kind)
	switch l.Kind {
	case "event":
		fmt.Fprintf(b, " %s -> %s", l.Event, l.To)
	case "step":
		fmt.Fprintf(b, " %s (stays %s)", l.Step, l.State)
	}
	fmt.Fprintf(b, "  %s: %s\n", l.Reason, orDash(l.Message))
	var notes []string
	if l.Warning {
		notes = append(notes, "a warning")
	}
	if l.RequeueAfter != "" {
		notes = append(notes, "looks again in "+l.RequeueAfter)
	}
	switch l.GD2 {
	case machines.LiveGD2Read:
		notes = append(notes, "GD2 read live")
	case machines.LiveGD2NotNeeded:
		notes = append(notes, "GD2 not needed")
	}
	fmt.Fprintf(b, "           (%s; the operator's decision function on live reads)\n", strings.Join(notes, "; "))
	if l.When != "" {
		fmt.Fprintf(b, "           %s fires when: %s\n", l.Event, l.When)
	}
	if l.Refused != "" {
		fmt.Fprintf(b, "           refused by the operator's runner: %s\n", l.Refused)
	}
}

// writeExplanation renders e as text or JSON; now dates "since".
func writeExplanation(w io.Writer, e explanation, format string, now time.Time) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(e)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s/%s\n", e.Kind, e.Namespace, e.Name)
	fmt.Fprintf(&b, "State:     %s", e.State)
	if e.Since != nil {
		fmt.Fprintf(&b, " since %s (%s ago)", e.Since.UTC().Format(time.RFC3339), now.Sub(*e.Since).Round(time.Second))
	}
	b.WriteString("\n")
	if e.Waiting != "" {
		fmt.Fprintf(&b, "Waiting:   %s\n", e.Waiting)
	}
	writeDecisions(&b, e)
	if e.Kind == kindGlusterCluster {
		b.WriteString("\nBlocking, deepest first:\n")
		if len(e.Blockers) == 0 {
			b.WriteString("  nothing: every node Online, every volume Healthy, no upgrade in progress\n")
		}
		for _, bl := range e.Blockers {
			fmt.Fprintf(&b, "  %s  %s", bl.Object, bl.State)
			if bl.Message != "" {
				b.WriteString("  " + bl.Message)
			}
			b.WriteString("\n")
		}
	}
	writeSwitchedOff(&b, e.SwitchedOff)
	if len(e.Conditions) > 0 {
		b.WriteString("\nConditions:\n")
		for _, c := range e.Conditions {
			fmt.Fprintf(&b, "  %s=%s  %s", c.Type, c.Status, c.Reason)
			if c.Message != "" {
				b.WriteString(": " + c.Message)
			}
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(&b, "\nLeaves %s by:\n", e.State)
	if len(e.Next) == 0 {
		b.WriteString("  nothing: a terminal state\n")
	}
	for _, x := range e.Next {
		fmt.Fprintf(&b, "  %s -> %s: %s\n", x.Event, x.To, x.When)
	}
	if len(e.History) > 0 {
		b.WriteString("\nRecent transitions:\n")
		for _, l := range e.History {
			b.WriteString("  " + l + "\n")
		}
	}
	if len(e.Ledger) > 0 {
		b.WriteString("\nLedger:\n")
		for _, l := range e.Ledger {
			b.WriteString("  " + l + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
