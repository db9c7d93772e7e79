package admin

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/gluster/anthill/kube/objects"
)

// clusterView is what init sees in the cluster, for its defaults.
type clusterView struct {
	// nodesInZone counts the Kubernetes nodes by zone label; nodes counts
	// them all.
	nodesInZone map[string]int
	nodes       int
	// classes are the StorageClasses, sorted; defaultClass the default.
	classes      []string
	defaultClass string
	// operator is what was read of the installed operator; now when.
	operator operatorHealth
	now      time.Time
	// unread says what could not be read, one sentence each.
	unread []string
}

func (v clusterView) zones() []string {
	zones := make([]string, 0, len(v.nodesInZone))
	for z := range v.nodesInZone {
		zones = append(zones, z)
	}
	slices.Sort(zones)
	return zones
}

// observe reads the nodes' zones, the StorageClasses and the operator's
// Deployment. What cannot be read only loses its defaults.
func observe(ctx context.Context, kc kubernetes.Interface, op operatorLookup) clusterView {
	v := clusterView{nodesInZone: map[string]int{}}
	if nodes, err := kc.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil {
		v.unread = append(v.unread, fmt.Sprintf("cannot list nodes (no zone default): %v", err))
	} else {
		v.nodes = len(nodes.Items)
		for _, n := range nodes.Items {
			if z := n.Labels[objects.ZoneLabel]; z != "" {
				v.nodesInZone[z]++
			}
		}
	}
	if classes, err := kc.StorageV1().StorageClasses().List(ctx, metav1.ListOptions{}); err != nil {
		v.unread = append(v.unread, fmt.Sprintf("cannot list StorageClasses: %v", err))
	} else {
		for _, c := range classes.Items {
			v.classes = append(v.classes, c.Name)
			if c.Annotations[defaultClassAnnotation] == "true" {
				v.defaultClass = c.Name
			}
		}
		slices.Sort(v.classes)
	}
	v.now = time.Now()
	h, err := readOperator(ctx, kc, op.namespace, op.anyNamespace)
	if err != nil {
		h.Unread = err.Error()
	}
	v.operator = h
	return v
}

// operatorLookup says where init looks for the operator: in namespace,
// and when anyNamespace (no --operator-namespace given) in the one
// namespace that has it.
type operatorLookup struct {
	namespace    string
	anyNamespace bool
}

// unknownVersion is what an image reference without a tag says of its
// version.
const unknownVersion = "unknown version"

// imageTag is the tag of an image reference, unknownVersion without.
func imageTag(image string) string {
	image, _, _ = strings.Cut(image, "@")
	if i := strings.LastIndexByte(image, ':'); i > strings.LastIndexByte(image, '/') {
		return image[i+1:]
	}
	return unknownVersion
}

// describe says what the view shows, for the start of the wizard.
func (v clusterView) describe(w io.Writer) {
	var zones []string
	for _, z := range v.zones() {
		zones = append(zones, fmt.Sprintf("%s (%d)", z, v.nodesInZone[z]))
	}
	if len(zones) == 0 {
		zones = []string{"none labelled " + objects.ZoneLabel}
	}
	fmt.Fprintf(w, "Kubernetes nodes: %d; zones: %s\n", v.nodes, strings.Join(zones, ", "))
	classes := make([]string, 0, len(v.classes))
	for _, c := range v.classes {
		if c == v.defaultClass {
			c += " (default)"
		}
		classes = append(classes, c)
	}
	if len(classes) == 0 {
		classes = []string{"none"}
	}
	fmt.Fprintf(w, "StorageClasses: %s\n", strings.Join(classes, ", "))
	switch h := v.operator; {
	case h.known() && !h.found() && len(h.stoppedBecause(v.now)) > 0:
		fmt.Fprintf(w, "anthill operator: none found in namespace %s; the cluster is created but nothing runs it until one is installed (docs/install.md)\n", h.Namespace)
	case h.known() && len(h.stoppedBecause(v.now)) > 0:
		// No version: a stopped operator runs none.
		fmt.Fprintf(w, "anthill operator: not running; the cluster is created but nothing acts on it until the operator runs\n")
	default:
		fmt.Fprintf(w, "anthill operator: %s\n", h.summary(v.now))
	}
	for _, u := range v.unread {
		fmt.Fprintf(w, "note: %s\n", u)
	}
}
