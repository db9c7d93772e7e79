// Command crdversions adds the served versions of the operator.gluster.org
// API that have no Go package of their own to the CRD manifests that
// controller-gen wrote from kube/apis/operator/v1alpha1.
//
// Today v1beta1 has exactly v1alpha1's schema, printer columns, selectable
// fields and subresources, so its version entry is a copy of v1alpha1's,
// made here rather than from a second copy of the Go types. v1beta1 is the
// storage version; v1alpha1 stays served. With identical schemas the API
// server's "None" conversion (it rewrites apiVersion only) is lossless, so
// the CRDs say so explicitly; the first schema difference between the two
// versions needs a conversion webhook instead (docs/api.md).
//
// Usage: crdversions FILE...   (each file is rewritten in place)
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

const (
	sourceVersion  = "v1alpha1"
	storageVersion = "v1beta1"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: crdversions FILE...")
		os.Exit(2)
	}
	for _, f := range os.Args[1:] {
		if err := rewrite(f); err != nil {
			fmt.Fprintf(os.Stderr, "crdversions: %s: %v\n", f, err)
			os.Exit(1)
		}
	}
}

func rewrite(file string) error {
	raw, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	body := bytes.TrimPrefix(raw, []byte("---\n"))
	var crd map[string]any
	if err := yaml.Unmarshal(body, &crd); err != nil {
		return err
	}
	if err := addVersions(crd); err != nil {
		return err
	}
	out, err := yaml.Marshal(crd)
	if err != nil {
		return err
	}
	// controller-gen starts each file with a document separator; keep it so
	// the files read as before apart from the added version.
	return os.WriteFile(file, append([]byte("---\n"), out...), 0o644)
}

// addVersions turns a CRD with the single version v1alpha1 into one that
// serves v1alpha1 and v1beta1 and stores v1beta1, with None conversion.
func addVersions(crd map[string]any) error {
	spec, ok := crd["spec"].(map[string]any)
	if !ok {
		return fmt.Errorf("no spec")
	}
	versions, ok := spec["versions"].([]any)
	if !ok || len(versions) != 1 {
		return fmt.Errorf("want exactly one version from controller-gen, found %d", len(versions))
	}
	src, ok := versions[0].(map[string]any)
	if !ok || src["name"] != sourceVersion {
		return fmt.Errorf("want version %s from controller-gen, found %v", sourceVersion, versions[0])
	}
	dst, err := deepCopy(src)
	if err != nil {
		return err
	}
	dst["name"] = storageVersion
	dst["served"] = true
	dst["storage"] = true
	src["served"] = true
	src["storage"] = false
	spec["versions"] = []any{src, dst}
	spec["conversion"] = map[string]any{"strategy": "None"}
	return nil
}

func deepCopy(m map[string]any) (map[string]any, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(b, &out)
}
