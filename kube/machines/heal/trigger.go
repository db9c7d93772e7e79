package heal

import (
	"fmt"
	"strings"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/states"
)

// ConditionHealTrigger on a GlusterCluster is True while a volume heals
// without the trigger GD2 failed to hand to a self-heal daemon (reason
// HealTriggerFailed, the volumes named in the message); it is absent
// otherwise.
const ConditionHealTrigger = "HealTriggerFailed"

// healingFromUndeliveredTrigger reports whether the last heal record of
// volume in history entered Healing on an undelivered trigger. The history
// is a bounded window: a record pushed out reads as a delivered trigger,
// which only drops the note.
func healingFromUndeliveredTrigger(history []operatorv1alpha1.TransitionRecord, volume string) bool {
	for i := len(history) - 1; i >= 0; i-- {
		h := history[i]
		if h.Machine == states.HealMachine && h.Subject == volume {
			return h.To == string(states.HealHealing) && h.Reason == states.ReasonHealTriggerFailed
		}
	}
	return false
}

// undeliveredNote is what the machine says when GD2 could not hand the
// heal trigger to a self-heal daemon: on how many nodes, and GD2's words
// for the first.
func undeliveredNote(err error) string {
	steps := gd2.TxnSteps(err)
	why := ""
	if len(steps) > 0 {
		why = ": " + steps[0].Error
	}
	return fmt.Sprintf("GD2 could not hand the heal trigger to the self-heal daemon on %d node(s) (step %s%s); "+
		"the daemons crawl on their own, so the heal is watched, not failed.", len(steps), gd2.StepSelfHealHeal, why)
}

// setHealTriggerCondition sets ConditionHealTrigger for the volumes that
// heal without a delivered trigger, or removes it when there are none.
func setHealTriggerCondition(c *operatorv1alpha1.GlusterCluster, volumes []string) {
	if len(volumes) == 0 {
		apimeta.RemoveStatusCondition(&c.Status.Conditions, ConditionHealTrigger)
		return
	}
	apimeta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{
		Type: ConditionHealTrigger, Status: metav1.ConditionTrue, Reason: states.ReasonHealTriggerFailed, ObservedGeneration: c.Generation,
		Message: engine.Truncate("GD2 could not hand the heal trigger to a self-heal daemon for volume(s) "+strings.Join(volumes, ", ")+
			"; the daemons crawl on their own and anthill watches the pending count fall.", engine.MaxConditionMessage),
	})
}
