package admin

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The operator's Deployment as the shipped installs name it
// (manifests/operator, the chart, the OLM bundle): its default namespace,
// the labels it is found by (operatorSelector), and the leader-election
// flags of `anthill operator` whose values say which Lease it renews.
const (
	defaultOperatorNamespace = "anthill-system"
	// The operator's own defaults for these flags (cmd/anthill).
	defaultLeaseName         = "anthill-operator"
	defaultLeaseDuration     = 15 * time.Second
	flagLeaderElect          = "leader-elect"
	flagLeaseName            = "leader-election-name"
	flagLeaseNamespace       = "leader-election-namespace"
	flagLeaseDuration        = "leader-election-lease-duration"
	labelAppVersion          = "app.kubernetes.io/version"
	operatorContainerName    = "operator"
	podNamespaceVariableText = "$(POD_NAMESPACE)"
)

// operatorHealth is what the plugin reads of the operator before it
// reports: whether anything acts on what it shows. It is gathered once per
// command (readOperator) and judged by a pure function (stoppedBecause).
type operatorHealth struct {
	// Namespace is where the Deployment was looked for (or found).
	Namespace  string `json:"namespace"`
	Deployment string `json:"deployment,omitempty"`
	Replicas   int32  `json:"replicas"`
	Ready      int32  `json:"readyReplicas"`
	// Image is the operator container's image in the Deployment's
	// template; Version its tag, else the Deployment's
	// app.kubernetes.io/version label. The operator publishes no version
	// of its own, so this is what the installed Deployment runs.
	Image   string `json:"image,omitempty"`
	Version string `json:"version,omitempty"`
	// LeaderElect says the operator elects a leader on the Lease
	// LeaseNamespace/LeaseName (its --leader-elect flag); without it
	// there is no Lease to check.
	LeaderElect    bool   `json:"leaderElect"`
	LeaseNamespace string `json:"leaseNamespace,omitempty"`
	LeaseName      string `json:"leaseName,omitempty"`
	LeaseFound     bool   `json:"leaseFound,omitempty"`
	Holder         string `json:"holder,omitempty"`
	// RenewTime is the leader's last renewal; LeaseDuration how long a
	// renewal holds (the Lease's own, else the operator's flag).
	RenewTime     *time.Time    `json:"renewTime,omitempty"`
	LeaseDuration time.Duration `json:"-"`
	// Unread says why the operator could not be checked; the health is
	// then unknown, not stopped.
	Unread string `json:"unread,omitempty"`
}

// found reports whether an operator Deployment was found.
func (h operatorHealth) found() bool { return h.Deployment != "" }

// known reports whether the operator could be checked at all.
func (h operatorHealth) known() bool { return h.Unread == "" }

// stoppedBecause says why nothing acts on the clusters: no Deployment,
// no ready replica, or a Lease no leader renewed within its duration. It
// is empty when the operator runs or when it could not be checked.
func (h operatorHealth) stoppedBecause(now time.Time) []string {
	if !h.known() {
		return nil
	}
	if !h.found() {
		if h.leaseFresh(now) {
			return nil
		}
		why := []string{fmt.Sprintf("no operator Deployment (labels %s) in namespace %s; --operator-namespace names another", operatorSelector, h.Namespace)}
		if h.LeaseFound {
			why = append(why, h.staleLease(now))
		}
		return why
	}
	var why []string
	switch {
	case h.Replicas == 0:
		why = append(why, fmt.Sprintf("Deployment %s/%s is scaled to 0", h.Namespace, h.Deployment))
	case h.Ready == 0:
		why = append(why, fmt.Sprintf("0 of %d replicas ready (Deployment %s/%s)", h.Replicas, h.Namespace, h.Deployment))
	}
	if !h.LeaderElect {
		return why
	}
	switch {
	case !h.LeaseFound:
		why = append(why, fmt.Sprintf("no Lease %s/%s: no replica has led", h.LeaseNamespace, h.LeaseName))
	case !h.leaseFresh(now):
		why = append(why, h.staleLease(now))
	}
	return why
}

// leaseFresh reports whether a leader renewed the Lease within its
// duration.
func (h operatorHealth) leaseFresh(now time.Time) bool {
	return h.LeaseFound && h.RenewTime != nil && now.Sub(*h.RenewTime) <= h.LeaseDuration
}

// staleLease says when the Lease was last renewed, and by whom.
func (h operatorHealth) staleLease(now time.Time) string {
	lease := h.LeaseNamespace + "/" + h.LeaseName
	if h.RenewTime == nil {
		return fmt.Sprintf("Lease %s was never renewed", lease)
	}
	held := ""
	if h.Holder != "" {
		held = " by " + h.Holder
	}
	return fmt.Sprintf("Lease %s last renewed %s ago%s (it holds for %s)", lease, ago(now, *h.RenewTime), held, h.LeaseDuration)
}

// ago is the time since t, rounded to what a person reads.
func ago(now, t time.Time) time.Duration {
	d := now.Sub(t)
	if d >= time.Minute {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}

// warnIfStopped writes, when nothing acts on the clusters, the one line
// that says so, before anything the command reports; and, when the
// operator cannot be checked for lack of rights, a note saying that.
func (h operatorHealth) warnIfStopped(w io.Writer, now time.Time) {
	if !h.known() {
		fmt.Fprintf(w, "note: cannot check whether the anthill operator runs: %s\n", h.Unread)
		return
	}
	if why := h.stoppedBecause(now); len(why) > 0 {
		fmt.Fprintf(w, "warning: the anthill operator is not running: %s — nothing below will change until it runs\n", strings.Join(why, "; "))
	}
}

// summary is one line on the operator for version and init: its version
// and what runs it when it runs, else why it does not.
func (h operatorHealth) summary(now time.Time) string {
	switch {
	case !h.known():
		return "unknown (" + h.Unread + ")"
	case !h.found() && h.leaseFresh(now):
		return fmt.Sprintf("running outside a Deployment: Lease %s/%s held by %s, renewed %s ago (such a run publishes no version)",
			h.LeaseNamespace, h.LeaseName, orDash(h.Holder), ago(now, *h.RenewTime))
	case !h.found():
		return "none found in namespace " + h.Namespace + " (--operator-namespace names another)"
	}
	if why := h.stoppedBecause(now); len(why) > 0 {
		// A stopped operator has no version that acts; the image only
		// says what would run.
		return fmt.Sprintf("not running: %s (its Deployment names image %s)", strings.Join(why, "; "), orDash(h.Image))
	}
	s := fmt.Sprintf("%s (image %s; Deployment %s/%s, %d of %d replicas ready", orDash(h.Version), orDash(h.Image), h.Namespace, h.Deployment, h.Ready, h.Replicas)
	if h.LeaderElect && h.Holder != "" {
		s += "; leader " + h.Holder
	}
	return s + ")"
}

// readOperator reads the operator Deployment in ns and, when it elects a
// leader, its Lease. When anyNamespace and ns has none, it looks in every
// namespace (an install into another namespace). A read the caller may
// not make leaves the health unknown; other errors are returned.
func readOperator(ctx context.Context, kc kubernetes.Interface, ns string, anyNamespace bool) (operatorHealth, error) {
	h := operatorHealth{Namespace: ns}
	list, err := kc.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{LabelSelector: operatorSelector})
	if err != nil {
		if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
			h.Unread = fmt.Sprintf("cannot list Deployments in namespace %s: %v", ns, err)
			return h, nil
		}
		return h, fmt.Errorf("list the operator's Deployments in namespace %s: %w", ns, err)
	}
	deps := list.Items
	if len(deps) == 0 && anyNamespace {
		// Not being allowed to look everywhere is no answer either way:
		// the check stays on ns.
		if all, err := kc.AppsV1().Deployments(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: operatorSelector}); err == nil {
			deps = all.Items
		}
	}
	if len(deps) == 0 {
		// An operator run outside the cluster (`anthill operator
		// --kubeconfig`, as a developer or the e2e tests run it) has no
		// Deployment; with leader election on its default Lease in ns,
		// that Lease still says whether it leads.
		h.LeaseNamespace, h.LeaseName, h.LeaseDuration = ns, defaultLeaseName, defaultLeaseDuration
		return h, h.readLease(ctx, kc)
	}
	sort.Slice(deps, func(i, j int) bool {
		return deps[i].Namespace+"/"+deps[i].Name < deps[j].Namespace+"/"+deps[j].Name
	})
	h.fromDeployment(&deps[0])
	if !h.LeaderElect {
		return h, nil
	}
	return h, h.readLease(ctx, kc)
}

// readLease reads the Lease the health names: its holder, last renewal
// and duration. A Lease that is not there is no error; one the caller
// may not read leaves the health unknown.
func (h *operatorHealth) readLease(ctx context.Context, kc kubernetes.Interface) error {
	lease, err := kc.CoordinationV1().Leases(h.LeaseNamespace).Get(ctx, h.LeaseName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
		h.Unread = fmt.Sprintf("cannot read Lease %s/%s: %v", h.LeaseNamespace, h.LeaseName, err)
		return nil
	case err != nil:
		return fmt.Errorf("get Lease %s/%s: %w", h.LeaseNamespace, h.LeaseName, err)
	}
	h.LeaseFound = true
	if lease.Spec.HolderIdentity != nil {
		h.Holder = *lease.Spec.HolderIdentity
	}
	if lease.Spec.RenewTime != nil {
		t := lease.Spec.RenewTime.Time
		h.RenewTime = &t
	}
	if s := lease.Spec.LeaseDurationSeconds; s != nil && *s > 0 {
		h.LeaseDuration = time.Duration(*s) * time.Second
	}
	return nil
}

// fromDeployment fills in what d says: where it runs, how many replicas
// are ready, its image and version, and the Lease its arguments name.
func (h *operatorHealth) fromDeployment(d *appsv1.Deployment) {
	h.Namespace, h.Deployment = d.Namespace, d.Name
	h.Replicas = 1
	if d.Spec.Replicas != nil {
		h.Replicas = *d.Spec.Replicas
	}
	h.Ready = d.Status.ReadyReplicas
	cs := d.Spec.Template.Spec.Containers
	var args []string
	for i, c := range cs {
		if c.Name == operatorContainerName || i == len(cs)-1 {
			h.Image, args = c.Image, c.Args
			break
		}
	}
	if v := imageTag(h.Image); v != unknownVersion {
		h.Version = v
	} else if v := d.Labels[labelAppVersion]; v != "" {
		h.Version = v
	}
	flags := operatorArgs(args)
	h.LeaderElect, _ = strconv.ParseBool(flags[flagLeaderElect])
	h.LeaseName = defaultLeaseName
	if v := flags[flagLeaseName]; v != "" {
		h.LeaseName = v
	}
	h.LeaseNamespace = defaultOperatorNamespace
	switch v := flags[flagLeaseNamespace]; v {
	case "":
	case podNamespaceVariableText:
		h.LeaseNamespace = d.Namespace
	default:
		h.LeaseNamespace = v
	}
	h.LeaseDuration = defaultLeaseDuration
	if v, err := time.ParseDuration(flags[flagLeaseDuration]); err == nil && v > 0 {
		h.LeaseDuration = v
	}
}

// operatorArgs reads the flags of `anthill operator` from a container's
// arguments as Go's flag package parses them: -name or --name, with
// =value or (not for a boolean) the next argument; a boolean alone is
// true.
func operatorArgs(args []string) map[string]string {
	out := map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" || a == "--" {
			continue
		}
		name := strings.TrimLeft(a, "-")
		if n, v, ok := strings.Cut(name, "="); ok {
			out[n] = v
			continue
		}
		if name == flagLeaderElect {
			out[name] = "true"
			continue
		}
		if i+1 < len(args) {
			out[name] = args[i+1]
			i++
		}
	}
	return out
}
