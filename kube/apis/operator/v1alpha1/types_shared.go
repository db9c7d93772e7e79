package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types set on GlusterCluster and GlusterNode status, beside the
// phase or state. Each is a metav1.Condition whose Reason is a CamelCase
// constant owned by the code that sets it.
const (
	// ConditionReady is True when the object serves I/O as configured.
	ConditionReady = "Ready"
	// ConditionProgressing is True while a state machine is moving the object
	// towards its spec (provisioning, scaling, upgrading, draining).
	ConditionProgressing = "Progressing"
	// ConditionDegraded is True when the object works with reduced
	// redundancy or needs an administrator (offline node, split brain).
	ConditionDegraded = "Degraded"
	// ConditionVersionMatches says, on a GlusterNode, whether the version
	// the server's GD2 reports is the version anthill records for it.
	ConditionVersionMatches = "VersionMatches"
)

// MaxHistory is the number of entries kept in a status history list. The
// writer drops the oldest entries first; the API server rejects longer lists.
const MaxHistory = 20

// TransitionRecord is one state-machine transition, as kept in the bounded
// status.history lists. The operator's log and the Kubernetes Event for the
// same transition carry the same fields.
type TransitionRecord struct {
	// time is when the transition was committed.
	Time metav1.Time `json:"time"`

	// machine names the state machine that moved: Node, Cluster, Upgrade or
	// Heal. Empty means the machine that owns the list.
	// +optional
	Machine string `json:"machine,omitempty"`

	// subject names what the machine runs for when it is not the object
	// itself, for example the volume of a Heal transition.
	// +optional
	Subject string `json:"subject,omitempty"`

	// from is the state before the transition.
	From string `json:"from"`

	// to is the state after the transition.
	To string `json:"to"`

	// event is the event that fired the transition.
	Event string `json:"event"`

	// reason is a CamelCase word saying why the event fired.
	// +optional
	Reason string `json:"reason,omitempty"`

	// message is a human-readable detail of the reason.
	// +optional
	Message string `json:"message,omitempty"`
}

// SecretReference names a Secret in the namespace of the referring object.
type SecretReference struct {
	// name is the name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// key is the data key within the Secret. Each referring field documents
	// its default key.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key,omitempty"`
}

// StatusSchemaLevel is the level of the status schema this API writes,
// recorded in every status it writes (status.statusSchema). It goes up by
// one with each release that adds a status field or a value an older
// operator would misread; an operator that finds a higher level than its
// own refuses to act on the object (reason NewerStatus) instead of writing
// a status that drops what it does not know. Level 1: v0.3.0.
const StatusSchemaLevel int32 = 1

// GetStatusSchema returns status.statusSchema.
func (c *GlusterCluster) GetStatusSchema() int32 { return c.Status.StatusSchema }

// GetStatusSchema returns status.statusSchema.
func (n *GlusterNode) GetStatusSchema() int32 { return n.Status.StatusSchema }
