package machines

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	anthillfake "github.com/gluster/anthill/kube/client/clientset/versioned/fake"
	"github.com/gluster/anthill/kube/objects"
)

// The informers of every factory keep their objects without managedFields,
// and keep everything else: the labelled pods, every PersistentVolume and
// the custom resources.
func TestInformersStoreObjectsWithoutManagedFields(t *testing.T) {
	fields := []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1"}}
	meta := func(name, ns string, labels map[string]string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, ManagedFields: fields}
	}
	managed := map[string]string{objects.LabelManagedBy: objects.ManagedByAnthill}
	kube := kubefake.NewClientset(
		&corev1.Pod{ObjectMeta: meta("p", "ns", managed), Spec: corev1.PodSpec{NodeName: "kn"}},
		&corev1.PersistentVolume{ObjectMeta: meta("pv", "", nil), Spec: corev1.PersistentVolumeSpec{StorageClassName: "sc"}},
	)
	anthill := anthillfake.NewSimpleClientset(&operatorv1alpha1.GlusterNode{ObjectMeta: meta("n", "ns", nil), Spec: operatorv1alpha1.GlusterNodeSpec{Zone: "z"}})
	fs, err := newFactories(kube, anthill, 0, metav1.NamespaceAll)
	if err != nil {
		t.Fatal(err)
	}
	pods, pvs, nodes := fs.managed.Core().V1().Pods(), fs.all.Core().V1().PersistentVolumes(), fs.anthill.Operator().V1alpha1().GlusterNodes()
	synced := []cache.InformerSynced{pods.Informer().HasSynced, pvs.Informer().HasSynced, nodes.Informer().HasSynced}
	stop := make(chan struct{})
	defer func() {
		close(stop)
		fs.managed.Shutdown()
		fs.all.Shutdown()
		fs.anthill.Shutdown()
	}()
	fs.managed.Start(stop)
	fs.all.Start(stop)
	fs.anthill.Start(stop)
	if !cache.WaitForCacheSync(stop, synced...) {
		t.Fatal("informers did not sync")
	}

	pod, err := pods.Lister().Pods("ns").Get("p")
	if err != nil {
		t.Fatal(err)
	}
	pv, err := pvs.Lister().Get("pv")
	if err != nil {
		t.Fatal(err)
	}
	node, err := nodes.Lister().GlusterNodes("ns").Get("n")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []struct {
		what string
		m    metav1.Object
		kept bool
	}{
		{"pod", pod, pod.Spec.NodeName == "kn"},
		{"PersistentVolume", pv, pv.Spec.StorageClassName == "sc"},
		{"GlusterNode", node, node.Spec.Zone == "z"},
	} {
		if got := o.m.GetManagedFields(); got != nil {
			t.Errorf("the cached %s keeps managedFields %+v", o.what, got)
		}
		if !o.kept {
			t.Errorf("the cached %s lost more than its managedFields: %+v", o.what, o.m)
		}
	}
}
