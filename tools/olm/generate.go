package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	opversion "github.com/operator-framework/api/pkg/lib/version"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Package and channel of the bundle.
const (
	packageName = "anthill"
	channel     = "preview"
)

// icon is anthill's mark: an ant hill, drawn for the bundle.
const icon = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><path d="M4 56 L32 12 L60 56 Z" fill="#8a5a2b"/><circle cx="32" cy="44" r="5" fill="#2b1a0c"/></svg>`

// generate writes the bundle of the repository at root into out.
func generate(root, out string) error {
	raw, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		return err
	}
	version := strings.TrimSpace(string(raw))
	sv, err := semver.ParseTolerant(version)
	if err != nil {
		return fmt.Errorf("VERSION %q: %w", version, err)
	}
	var dep appsv1.Deployment
	if err := readOne(filepath.Join(root, "manifests/operator/deployment.yaml"), &dep); err != nil {
		return err
	}
	var cr rbacv1.ClusterRole
	if err := readOne(filepath.Join(root, "manifests/rbac/cluster_role.yaml"), &cr); err != nil {
		return err
	}
	var leader rbacv1.Role
	if err := readOne(filepath.Join(root, "manifests/rbac/leader_election_role.yaml"), &leader); err != nil {
		return err
	}
	crdFiles, err := filepath.Glob(filepath.Join(root, "manifests/crds/operator.gluster.org_*.yaml"))
	if err != nil {
		return err
	}
	sort.Strings(crdFiles)
	var owned []operatorsv1alpha1.CRDDescription
	for _, f := range crdFiles {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := readOne(f, &crd); err != nil {
			return err
		}
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			desc := crd.Spec.Names.Kind
			if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil && v.Schema.OpenAPIV3Schema.Description != "" {
				desc = firstSentence(v.Schema.OpenAPIV3Schema.Description)
			}
			d := descriptors[crd.Spec.Names.Kind]
			owned = append(owned, operatorsv1alpha1.CRDDescription{
				Name: crd.Name, Version: v.Name, Kind: crd.Spec.Names.Kind, DisplayName: crd.Spec.Names.Kind, Description: desc,
				SpecDescriptors: d.spec, StatusDescriptors: d.status,
			})
		}
	}
	examples, err := samples(filepath.Join(root, "manifests/samples"), "glustercluster.yaml", "glustercluster-automatic.yaml")
	if err != nil {
		return err
	}

	related, err := relatedImages(root, &dep)
	if err != nil {
		return err
	}
	replaces, skipRange, err := upgradeGraph(filepath.Join(root, "CHANGELOG.md"), sv)
	if err != nil {
		return err
	}

	name := packageName + ".v" + sv.String()
	csv := operatorsv1alpha1.ClusterServiceVersion{
		TypeMeta: metav1.TypeMeta{APIVersion: operatorsv1alpha1.SchemeGroupVersion.String(), Kind: operatorsv1alpha1.ClusterServiceVersionKind},
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Annotations: map[string]string{
				"alm-examples": examples,
				// Heal-gated Gluster upgrades and operator handover
				// (docs/upgrades.md, docs/upgrading-the-operator.md).
				"capabilities":   "Seamless Upgrades",
				"categories":     "Storage",
				"containerImage": dep.Spec.Template.Spec.Containers[0].Image,
				"description":    "Deploys and runs Gluster storage clusters managed through glusterd2.",
				"repository":     "https://github.com/gluster/anthill",
				"olm.skipRange":  skipRange,
			},
		},
		Spec: operatorsv1alpha1.ClusterServiceVersionSpec{
			DisplayName: "anthill",
			Description: "anthill deploys and runs Gluster storage clusters managed through glusterd2. Every Gluster node, " +
				"volume heal and upgrade step is an explicit state machine persisted in status and GD2 metadata: nodes are " +
				"decommissioned only after their bricks have a healed copy elsewhere, upgrades roll one node at a time gated " +
				"on heal, and every transition is logged with its reason.",
			Version:        opversion.OperatorVersion{Version: sv},
			Replaces:       replaces,
			Maturity:       "alpha",
			MinKubeVersion: "1.30.0",
			Keywords:       []string{"gluster", "glusterd2", "storage", "filesystem", "csi"},
			Provider:       operatorsv1alpha1.AppLink{Name: "The Gluster project"},
			Links: []operatorsv1alpha1.AppLink{
				{Name: "Source", URL: "https://github.com/gluster/anthill"},
				{Name: "Documentation", URL: "https://github.com/gluster/anthill/tree/main/docs"},
			},
			Icon: []operatorsv1alpha1.Icon{{Data: base64.StdEncoding.EncodeToString([]byte(icon)), MediaType: "image/svg+xml"}},
			InstallModes: []operatorsv1alpha1.InstallMode{
				// The operator watches GlusterClusters in every namespace.
				{Type: operatorsv1alpha1.InstallModeTypeOwnNamespace, Supported: false},
				{Type: operatorsv1alpha1.InstallModeTypeSingleNamespace, Supported: false},
				{Type: operatorsv1alpha1.InstallModeTypeMultiNamespace, Supported: false},
				{Type: operatorsv1alpha1.InstallModeTypeAllNamespaces, Supported: true},
			},
			CustomResourceDefinitions: operatorsv1alpha1.CustomResourceDefinitions{Owned: owned},
			RelatedImages:             related,
			InstallStrategy: operatorsv1alpha1.NamedInstallStrategy{
				StrategyName: operatorsv1alpha1.InstallStrategyNameDeployment,
				StrategySpec: operatorsv1alpha1.StrategyDetailsDeployment{
					DeploymentSpecs: []operatorsv1alpha1.StrategyDeploymentSpec{{Name: dep.Name, Spec: dep.Spec}},
					ClusterPermissions: []operatorsv1alpha1.StrategyDeploymentPermissions{
						{ServiceAccountName: dep.Spec.Template.Spec.ServiceAccountName, Rules: cr.Rules},
					},
					Permissions: []operatorsv1alpha1.StrategyDeploymentPermissions{
						{ServiceAccountName: dep.Spec.Template.Spec.ServiceAccountName, Rules: leader.Rules},
					},
				},
			},
		},
	}
	manifests := filepath.Join(out, "manifests")
	metadata := filepath.Join(out, "metadata")
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	for _, d := range []string{manifests, metadata} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	obj, err := plain(csv)
	if err != nil {
		return err
	}
	// A CSV in a bundle carries no status; OLM writes it.
	delete(obj, "status")
	if err := writeYAML(filepath.Join(manifests, packageName+".clusterserviceversion.yaml"), obj); err != nil {
		return err
	}
	for _, f := range crdFiles {
		if err := copyFile(f, filepath.Join(manifests, filepath.Base(f))); err != nil {
			return err
		}
	}
	// The metrics Service and the person roles ship as plain objects; OLM
	// puts namespaced ones in the operator's namespace.
	if err := copyStripped(filepath.Join(root, "manifests/operator/service.yaml"), filepath.Join(manifests, "anthill-operator-metrics_v1_service.yaml")); err != nil {
		return err
	}
	if err := splitInto(filepath.Join(root, "manifests/rbac/person_roles.yaml"), manifests); err != nil {
		return err
	}
	annotations := map[string]map[string]string{"annotations": {
		"operators.operatorframework.io.bundle.mediatype.v1":       "registry+v1",
		"operators.operatorframework.io.bundle.manifests.v1":       "manifests/",
		"operators.operatorframework.io.bundle.metadata.v1":        "metadata/",
		"operators.operatorframework.io.bundle.package.v1":         packageName,
		"operators.operatorframework.io.bundle.channels.v1":        channel,
		"operators.operatorframework.io.bundle.channel.default.v1": channel,
	}}
	return writeYAML(filepath.Join(metadata, "annotations.yaml"), annotations)
}

// plain is v as generic JSON values, without what the typed structs leave
// behind: null creationTimestamp fields and empty objects (a Deployment
// strategy, API service definitions) that the source manifests do not have.
func plain(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	tidy(m)
	return m, nil
}

func tidy(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			tidy(x)
			if x == nil && k == "creationTimestamp" {
				delete(t, k)
			}
			if m, ok := x.(map[string]any); ok && len(m) == 0 {
				delete(t, k)
			}
		}
	case []any:
		for _, x := range t {
			tidy(x)
		}
	}
}

// firstSentence is s up to its first full stop.
func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

// samples is the alm-examples annotation: the named sample manifests as
// one JSON array.
func samples(dir string, names ...string) (string, error) {
	var objs []json.RawMessage
	for _, n := range names {
		var obj map[string]any
		if err := readOne(filepath.Join(dir, n), &obj); err != nil {
			return "", err
		}
		if md, ok := obj["metadata"].(map[string]any); ok {
			delete(md, "namespace")
		}
		b, err := json.Marshal(obj)
		if err != nil {
			return "", err
		}
		objs = append(objs, b)
	}
	b, err := json.MarshalIndent(objs, "", "  ")
	return string(b), err
}

// readOne decodes the first YAML document of path into v.
func readOne(path string, v any) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := utilyaml.NewYAMLOrJSONDecoder(f, 4096).Decode(v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// splitInto writes each object of the multi-document YAML file path into
// dir as NAME_KIND.yaml, without its namespace.
func splitInto(path, dir string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	d := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		var obj map[string]any
		if err := d.Decode(&obj); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if obj == nil {
			continue
		}
		md, _ := obj["metadata"].(map[string]any)
		delete(md, "namespace")
		name := fmt.Sprintf("%v_%s.yaml", md["name"], strings.ToLower(fmt.Sprint(obj["kind"])))
		if err := writeYAML(filepath.Join(dir, name), obj); err != nil {
			return err
		}
	}
}

func copyStripped(from, to string) error {
	var obj map[string]any
	if err := readOne(from, &obj); err != nil {
		return err
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		delete(md, "namespace")
	}
	return writeYAML(to, obj)
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}

// writeYAML writes v as YAML under a header saying where it comes from.
func writeYAML(path string, v any) error {
	b, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	buf.WriteString("# Generated by tools/olm from manifests/ and VERSION (make generate); do not edit.\n")
	buf.Write(b)
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
