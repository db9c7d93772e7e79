package manifests

import (
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestDeploymentRunsTheProjectVersion: the operator Deployment runs the
// image `make image` builds, tagged with VERSION (never latest), and its
// args do not repeat the image's entrypoint subcommand.
func TestDeploymentRunsTheProjectVersion(t *testing.T) {
	version, err := os.ReadFile("../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("operator/deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var dep struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Name, Image string
						Args        []string
					}
				}
			}
		}
	}
	if err := yaml.Unmarshal(raw, &dep); err != nil {
		t.Fatal(err)
	}
	cs := dep.Spec.Template.Spec.Containers
	if len(cs) != 1 {
		t.Fatalf("the Deployment has %d containers, want the operator only", len(cs))
	}
	if want := "quay.io/gluster/anthill:" + strings.TrimSpace(string(version)); cs[0].Image != want {
		t.Errorf("the operator runs %q, want %q (VERSION)", cs[0].Image, want)
	}
	if len(cs[0].Args) > 0 && cs[0].Args[0] == "operator" {
		t.Error("args start with operator, which the image's entrypoint already is")
	}
}
