package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/gluster/anthill/cmd/internal/cli"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/operator"
)

func init() {
	commands.Register("check", cli.Command{
		Summary: "check an installed operator: its Deployment has an available replica and the API server serves its CRDs (the chart's helm test runs it)",
		Run: func(ctx context.Context, args []string) error {
			return checkCmd(ctx, args, os.Stdout, os.Stderr, func(kubeconfig string) (kubernetes.Interface, error) {
				rc, err := operator.RestConfig(kubeconfig)
				if err != nil {
					return nil, err
				}
				return kubernetes.NewForConfig(rc)
			})
		},
	})
}

// servedResources are the resources the operator's CRDs must serve.
var servedResources = []string{"glusterclusters", "glusternodes"}

// checkCmd implements `anthill check`: one read of the Deployment and one
// discovery call, each failure a sentence naming what is missing.
func checkCmd(ctx context.Context, args []string, stdout, stderr io.Writer, client func(kubeconfig string) (kubernetes.Interface, error)) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file; empty means in-cluster configuration")
	namespace := fs.String("namespace", "anthill-system", "the operator's namespace")
	deployment := fs.String("deployment", "anthill-operator", "the operator's Deployment")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	c, err := client(*kubeconfig)
	if err != nil {
		return err
	}

	d, err := c.AppsV1().Deployments(*namespace).Get(ctx, *deployment, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("the operator Deployment %s/%s does not exist", *namespace, *deployment)
	}
	if err != nil {
		return fmt.Errorf("read the operator Deployment %s/%s: %w", *namespace, *deployment, err)
	}
	if d.Status.AvailableReplicas < 1 {
		return fmt.Errorf("the operator Deployment %s/%s has no available replica (%d of %d ready)", *namespace, *deployment, d.Status.ReadyReplicas, d.Status.Replicas)
	}
	fmt.Fprintf(stdout, "operator Deployment %s/%s: %d of %d replicas available\n", *namespace, *deployment, d.Status.AvailableReplicas, d.Status.Replicas)

	gv := operatorv1alpha1.SchemeGroupVersion.String()
	list, err := c.Discovery().ServerResourcesForGroupVersion(gv)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("discover %s: %w", gv, err)
	}
	var served []string
	if list != nil {
		for _, r := range list.APIResources {
			served = append(served, r.Name)
		}
	}
	var missing []string
	for _, r := range servedResources {
		if !slices.Contains(served, r) {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the API server does not serve %s in %s (are the CRDs installed?)", strings.Join(missing, " and "), gv)
	}
	fmt.Fprintf(stdout, "API %s: %s served\n", gv, strings.Join(servedResources, ", "))
	return nil
}
