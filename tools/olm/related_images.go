package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
)

// imagesFile holds anthill's pinned images (DefaultImages); the GD2 image
// is read from it, since no manifest passes it: each cluster names its
// own, and the samples leave the choice to the admin.
const imagesFile = "kube/objects/images.go"

// relatedImages are the images the bundle's operator runs or has run for
// it, for mirroring: its own image, the GD2 image anthill pins, and each
// image its Deployment passes as a --<name>-image flag, under that name.
// A test in cmd/anthill holds the result equal to kube/objects/images.go.
func relatedImages(root string, dep *appsv1.Deployment) ([]operatorsv1alpha1.RelatedImage, error) {
	op := dep.Spec.Template.Spec.Containers[0]
	gd2, err := pinnedGD2Image(filepath.Join(root, imagesFile))
	if err != nil {
		return nil, err
	}
	out := []operatorsv1alpha1.RelatedImage{{Name: "anthill", Image: op.Image}, {Name: "glusterd2", Image: gd2}}
	for _, a := range op.Args {
		flag, ref, ok := strings.Cut(a, "=")
		name, isImage := strings.CutSuffix(strings.TrimPrefix(flag, "--"), "-image")
		if !ok || !isImage || !strings.HasPrefix(flag, "--") {
			continue
		}
		out = append(out, operatorsv1alpha1.RelatedImage{Name: name, Image: ref})
	}
	return out, nil
}

// pinnedGD2Image is the GD2 field of the DefaultImages literal in path.
func pinnedGD2Image(path string) (string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		return "", err
	}
	var ref string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "DefaultImages" || len(vs.Values) != 1 {
			return true
		}
		lit, ok := vs.Values[0].(*ast.CompositeLit)
		if !ok {
			return false
		}
		for _, e := range lit.Elts {
			kv, ok := e.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "GD2" {
				if v, ok := kv.Value.(*ast.BasicLit); ok && v.Kind == token.STRING {
					ref, _ = strconv.Unquote(v.Value)
				}
			}
		}
		return false
	})
	if ref == "" {
		return "", fmt.Errorf("%s: no GD2 string in DefaultImages", path)
	}
	return ref, nil
}
