package admin

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/gluster/anthill/cmd/internal/cli"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/storageversion"
)

// migratedCRDs are the CRDs migrate-storage visits, in this order.
var migratedCRDs = []string{
	operatorv1alpha1.GlusterClusterResource + "." + operatorv1alpha1.GroupName,
	operatorv1alpha1.GlusterNodeResource + "." + operatorv1alpha1.GroupName,
}

func (r *root) migrateStorageCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "migrate-storage",
		Short: "rewrite every GlusterCluster and GlusterNode at the CRDs' storage version",
		Long: "Rewrites every GlusterCluster and GlusterNode, in every namespace, at its\n" +
			"CRD's storage version, then sets the CRD's status.storedVersions to that\n" +
			"version alone. Run it as a cluster admin after installing CRDs whose storage\n" +
			"version changed (see docs/upgrading-the-operator.md). Objects, their status\n" +
			"and their generation are unchanged; running it again, or after an\n" +
			"interruption, is safe.",
		Args: exactArgs(),
	}
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		rc, _, err := r.kube.restConfig()
		if err != nil {
			return err
		}
		c, err := migrationClients(rc)
		if err != nil {
			return err
		}
		for _, name := range migratedCRDs {
			res, err := storageversion.Migrate(cmd.Context(), c, name, nil)
			if err != nil {
				return fmt.Errorf("%s: %w (nothing is lost: run it again)", name, err)
			}
			if res.AlreadyMigrated {
				fmt.Fprintf(r.out(), "%s: already stored only at %s\n", name, res.StorageVersion)
				continue
			}
			fmt.Fprintf(r.out(), "%s: %d objects rewritten at %s, %d already there; storedVersions [%s] -> [%s]\n",
				name, res.Rewritten, res.StorageVersion, res.Unchanged, strings.Join(res.StoredVersionsBefore, " "), res.StorageVersion)
		}
		return nil
	}
	return cmd
}

func migrationClients(rc *rest.Config) (storageversion.Clients, error) {
	rc = rest.CopyConfig(rc)
	rc.UserAgent = "kubectl-gluster/" + cli.Version
	crds, err := apiextensionsclient.NewForConfig(rc)
	if err != nil {
		return storageversion.Clients{}, fmt.Errorf("apiextensions client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return storageversion.Clients{}, fmt.Errorf("dynamic client: %w", err)
	}
	return storageversion.Clients{CRDs: crds, Dynamic: dyn}, nil
}
