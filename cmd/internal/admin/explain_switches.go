package admin

import (
	"fmt"
	"slices"
	"strings"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

// explainSwitch is one automation spec.automation switches off: its field
// and what waits on it now ("object state: message"), none when nothing is
// due.
type explainSwitch struct {
	Field   string   `json:"field"`
	Holding []string `json:"holding,omitempty"`
}

// writeSwitchedOff writes explain's "Switched off" section, when any switch
// is off.
func writeSwitchedOff(b *strings.Builder, off []explainSwitch) {
	if len(off) == 0 {
		return
	}
	b.WriteString("\nSwitched off (spec.automation):\n")
	for _, s := range off {
		if len(s.Holding) == 0 {
			fmt.Fprintf(b, "  %s: holds nothing now\n", s.Field)
		}
		for _, h := range s.Holding {
			fmt.Fprintf(b, "  %s: holds %s\n", s.Field, h)
		}
	}
}

// automationSwitches are spec.automation's fields, in the order explain
// lists them, with whether an AutomationOff switches each off.
var automationSwitches = []struct {
	field string
	off   func(states.AutomationOff) bool
}{
	{"disruptionBudgets", func(o states.AutomationOff) bool { return o.DisruptionBudgets }},
	{"templateRollouts", func(o states.AutomationOff) bool { return o.TemplateRollouts }},
	{"clusterOptions", func(o states.AutomationOff) bool { return o.ClusterOptions }},
	{"lostPodEviction", func(o states.AutomationOff) bool { return o.LostPodEviction }},
	{"markFailed", func(o states.AutomationOff) bool { return o.MarkFailed }},
	{"forceStartBricks", func(o states.AutomationOff) bool { return o.ForceStartBricks }},
}

// switchedOff lists the automations c switches off, each with the waits
// its machines persisted on it (their messages name the field: see
// states.ReasonAutomationOff): the disruption machine's, the upgrade
// machine's, each volume's, each node's, and the cluster's conditions.
func switchedOff(c *operatorv1alpha1.GlusterCluster, nodes []operatorv1alpha1.GlusterNode) []explainSwitch {
	off := objects.AutomationOff(c)
	type waiting struct{ object, state, message string }
	var waits []waiting
	if d := c.Status.Disruption; d != nil {
		waits = append(waits, waiting{"disruption", d.State, d.Message})
	}
	if u := c.Status.Upgrade; u != nil {
		waits = append(waits, waiting{"upgrade", u.State, u.Message})
	}
	for _, v := range c.Status.Volumes {
		waits = append(waits, waiting{"volume/" + v.Name, v.State, v.Message})
	}
	for _, n := range nodes {
		waits = append(waits, waiting{"glusternode/" + n.Name, n.Status.State, n.Status.Message})
	}
	for _, cd := range c.Status.Conditions {
		waits = append(waits, waiting{"glustercluster/" + c.Name, string(c.Status.Phase), cd.Message})
	}
	var out []explainSwitch
	for _, s := range automationSwitches {
		if !s.off(off) {
			continue
		}
		sw := explainSwitch{Field: s.field}
		mark := "spec.automation." + s.field + " is false"
		for _, w := range waits {
			if h := w.object + " " + w.state + ": " + w.message; strings.Contains(w.message, mark) && !slices.Contains(sw.Holding, h) {
				sw.Holding = append(sw.Holding, h)
			}
		}
		out = append(out, sw)
	}
	return out
}
