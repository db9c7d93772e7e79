package objects

import (
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/states"
)

// AutomationOff is what c's spec.automation switched off; an unset
// switch is on.
func AutomationOff(c *operatorv1alpha1.GlusterCluster) states.AutomationOff {
	a := c.Spec.Automation
	if a == nil {
		return states.AutomationOff{}
	}
	off := func(b *bool) bool { return b != nil && !*b }
	return states.AutomationOff{
		DisruptionBudgets: off(a.DisruptionBudgets), TemplateRollouts: off(a.TemplateRollouts), ClusterOptions: off(a.ClusterOptions),
		LostPodEviction: off(a.LostPodEviction), MarkFailed: off(a.MarkFailed), ForceStartBricks: off(a.ForceStartBricks),
	}
}
