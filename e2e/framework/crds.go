package framework

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/gluster/anthill/manifests"
)

// InstallCRDs creates (or updates) every CRD shipped in manifests/crds and
// waits until the API server reports each one Established, so tests exercise
// exactly the schema and validation rules that users install.
func (cp *ControlPlane) InstallCRDs(ctx context.Context) error {
	client, err := apiextensionsclient.NewForConfig(cp.RestConfig)
	if err != nil {
		return err
	}
	files, err := fs.Glob(manifests.CRDs, "crds/*.yaml")
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no CRDs embedded in manifests")
	}
	var names []string
	for _, f := range files {
		if path.Base(f) == "kustomization.yaml" {
			continue
		}
		raw, err := fs.ReadFile(manifests.CRDs, f)
		if err != nil {
			return err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(raw, crd); err != nil {
			return fmt.Errorf("decode %s: %w", f, err)
		}
		existing, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			_, err = client.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{})
		case err == nil:
			crd.ResourceVersion = existing.ResourceVersion
			_, err = client.ApiextensionsV1().CustomResourceDefinitions().Update(ctx, crd, metav1.UpdateOptions{})
		}
		if err != nil {
			return fmt.Errorf("install CRD %s: %w", crd.Name, err)
		}
		names = append(names, crd.Name)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	err = poll(wctx, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		for _, n := range names {
			crd, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if !crdEstablished(crd) {
				return false, fmt.Errorf("CRD %s not established yet", n)
			}
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	cp.logf("installed CRDs %v", names)
	return nil
}

func crdEstablished(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established {
			return c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}
