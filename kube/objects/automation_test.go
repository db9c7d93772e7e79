package objects

import (
	"testing"

	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/internal/fixtures"
	"github.com/gluster/anthill/states"
)

func TestAutomationOffReadsOnlyFalseAsOff(t *testing.T) {
	c := fixtures.Cluster("gc")
	if got := AutomationOff(c); got != (states.AutomationOff{}) {
		t.Errorf("no spec.automation: %+v, want nothing off", got)
	}
	c.Spec.Automation = &operatorv1alpha1.AutomationSpec{
		DisruptionBudgets: ptr.To(false), TemplateRollouts: ptr.To(true), ClusterOptions: ptr.To(false),
		LostPodEviction: ptr.To(false), MarkFailed: ptr.To(false), ForceStartBricks: ptr.To(false),
	}
	want := states.AutomationOff{DisruptionBudgets: true, ClusterOptions: true, LostPodEviction: true, MarkFailed: true, ForceStartBricks: true}
	if got := AutomationOff(c); got != want {
		t.Errorf("%+v, want %+v", got, want)
	}
}
