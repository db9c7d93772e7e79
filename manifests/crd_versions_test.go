package manifests

import (
	"io/fs"
	"reflect"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// TestCRDVersionsShareOneSchema holds the CRDs to docs/api.md's "Versions":
// v1alpha1 and v1beta1 are both served, v1beta1 alone is stored, and the
// two version entries are identical apart from their name and storage flag
// (schema, CEL rules, defaults, printer columns, selectable fields and
// subresources), which is what makes the API server's None conversion
// lossless. The first difference between the two must come with a
// conversion webhook, and this test with it.
func TestCRDVersionsShareOneSchema(t *testing.T) {
	files, err := fs.Glob(CRDs, "crds/*.yaml")
	if err != nil || len(files) != 2 {
		t.Fatalf("embedded CRDs: %v %v", files, err)
	}
	for _, f := range files {
		raw, err := fs.ReadFile(CRDs, f)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(raw, &crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if c := crd.Spec.Conversion; c == nil || c.Strategy != apiextensionsv1.NoneConverter || c.Webhook != nil {
			t.Errorf("%s: conversion = %+v, want strategy None and no webhook", f, c)
		}
		vs := crd.Spec.Versions
		if len(vs) != 2 || vs[0].Name != "v1alpha1" || vs[1].Name != "v1beta1" {
			t.Fatalf("%s: versions %v, want v1alpha1 and v1beta1", f, names(vs))
		}
		alpha, beta := vs[0], vs[1]
		if !alpha.Served || alpha.Storage || !beta.Served || !beta.Storage {
			t.Errorf("%s: served/storage v1alpha1 %t/%t, v1beta1 %t/%t; want v1alpha1 served, v1beta1 served and stored",
				f, alpha.Served, alpha.Storage, beta.Served, beta.Storage)
		}
		if alpha.Schema == nil || alpha.Schema.OpenAPIV3Schema == nil || len(alpha.Schema.OpenAPIV3Schema.Properties) == 0 {
			t.Fatalf("%s: v1alpha1 has no schema", f)
		}
		alpha.Name, alpha.Storage = "", false
		beta.Name, beta.Storage = "", false
		if !reflect.DeepEqual(alpha, beta) {
			t.Errorf("%s: the v1beta1 version entry differs from v1alpha1's: run make generate, or add a conversion webhook (docs/api.md)", f)
		}
	}
}

func names(vs []apiextensionsv1.CustomResourceDefinitionVersion) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Name)
	}
	return out
}
