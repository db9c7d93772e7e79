package framework

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gluster/anthill/manifests"
)

// OperatorNamespace and OperatorServiceAccount name the identity that
// manifests/rbac grants; the operator runs as that service account.
const (
	OperatorNamespace      = "anthill-system"
	OperatorServiceAccount = "anthill-operator"
	// OperatorUser is the user name the API server sees the operator as.
	OperatorUser = "system:serviceaccount:" + OperatorNamespace + ":" + OperatorServiceAccount
	// OperatorIdentity is the leader-election identity of every run.
	OperatorIdentity = "anthill-under-test"
	// RBACDenied is in every error (and so every operator log line) that
	// reports a request the operator's RBAC denied.
	RBACDenied = `is forbidden: User \"system:serviceaccount:` + OperatorNamespace + ":" + OperatorServiceAccount + `\"`
)

// InstallOperatorRBAC creates the objects of manifests.RBAC (namespace,
// service account, roles and bindings) and writes a kubeconfig that
// impersonates the operator's service account. It returns the path of that
// kubeconfig: a process using it may do exactly what the shipped RBAC
// allows, so a rule missing from manifests/rbac fails the tests. It
// authenticates with a client certificate of its own (operatorImpersonator),
// not the admin's, so the audit policy tells its requests apart.
func (cp *ControlPlane) InstallOperatorRBAC(ctx context.Context) (string, error) {
	files, err := fs.Glob(manifests.RBAC, "*/*.yaml")
	if err != nil {
		return "", err
	}
	for _, f := range files {
		raw, err := fs.ReadFile(manifests.RBAC, f)
		if err != nil {
			return "", err
		}
		objs, err := decodeAll(raw)
		if err != nil {
			return "", fmt.Errorf("decode %s: %w", f, err)
		}
		for _, o := range objs {
			if err := cp.createRBACObject(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
				return "", fmt.Errorf("create %T from %s: %w", o, f, err)
			}
		}
	}
	path, err := cp.serviceAccountKubeconfig(OperatorServiceAccount, "operator-kubeconfig")
	if err != nil {
		return "", err
	}
	cp.logf("installed the operator's RBAC; it runs as %s/%s", OperatorNamespace, OperatorServiceAccount)
	return path, nil
}

// serviceAccountKubeconfig writes <cp.Dir>/<file>, a kubeconfig that
// impersonates service account sa of OperatorNamespace with the operator's
// client certificate (so the audit policy records its requests).
func (cp *ControlPlane) serviceAccountKubeconfig(sa, file string) (string, error) {
	cfg, err := clientcmd.LoadFromFile(cp.Kubeconfig)
	if err != nil {
		return "", err
	}
	for _, a := range cfg.AuthInfos {
		a.ClientCertificate, a.ClientKey = "", ""
		a.ClientCertificateData, a.ClientKeyData = cp.pki.operatorCertPEM, cp.pki.operatorKeyPEM
		a.Impersonate = "system:serviceaccount:" + OperatorNamespace + ":" + sa
		a.ImpersonateGroups = []string{"system:serviceaccounts", "system:serviceaccounts:" + OperatorNamespace, "system:authenticated"}
	}
	raw, err := clientcmd.Write(*cfg)
	if err != nil {
		return "", fmt.Errorf("encode %s: %w", file, err)
	}
	// Tests side by side each install the RBAC and write this file while
	// others' operators start from it: it is replaced whole, by a rename,
	// never truncated under a reader.
	path := filepath.Join(cp.Dir, file)
	tmp, err := os.CreateTemp(cp.Dir, file+".*")
	if err != nil {
		return "", err
	}
	if _, err := tmp.Write(raw); err != nil {
		tmp.Close()
		return "", fmt.Errorf("write %s: %w", file, err)
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", fmt.Errorf("write %s: %w", file, err)
	}
	return path, nil
}

// decodeAll decodes every document of a multi-document YAML file into a
// typed object.
func decodeAll(raw []byte) ([]runtime.Object, error) {
	var objs []runtime.Object
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		o, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			return nil, err
		}
		objs = append(objs, o)
	}
}

func (cp *ControlPlane) createRBACObject(ctx context.Context, o runtime.Object) error {
	c := cp.Client
	var err error
	switch o := o.(type) {
	case *corev1.Namespace:
		_, err = c.CoreV1().Namespaces().Create(ctx, o, metav1.CreateOptions{})
	case *corev1.ServiceAccount:
		_, err = c.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *rbacv1.ClusterRole:
		// Rules may have changed since an earlier run on this control plane.
		_, err = c.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			var cur *rbacv1.ClusterRole
			if cur, err = c.RbacV1().ClusterRoles().Get(ctx, o.Name, metav1.GetOptions{}); err == nil {
				o.ResourceVersion = cur.ResourceVersion
				_, err = c.RbacV1().ClusterRoles().Update(ctx, o, metav1.UpdateOptions{})
			}
		}
	case *rbacv1.ClusterRoleBinding:
		_, err = c.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
	case *rbacv1.Role:
		_, err = c.RbacV1().Roles(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			var cur *rbacv1.Role
			if cur, err = c.RbacV1().Roles(o.Namespace).Get(ctx, o.Name, metav1.GetOptions{}); err == nil {
				o.ResourceVersion = cur.ResourceVersion
				_, err = c.RbacV1().Roles(o.Namespace).Update(ctx, o, metav1.UpdateOptions{})
			}
		}
	case *rbacv1.RoleBinding:
		_, err = c.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	default:
		err = fmt.Errorf("unexpected kind %T", o)
	}
	return err
}

// InstallLeaderElectionRBAC grants the operator's service account the
// shipped leader-election Role (manifests/rbac/leader_election_role.yaml)
// in ns instead of the operator's own namespace: an operator run with
// --leader-election-namespace=ns keeps its Lease there, as one operator
// of several on one control plane does (each test's own, say).
func (cp *ControlPlane) InstallLeaderElectionRBAC(ctx context.Context, ns string) error {
	raw, err := fs.ReadFile(manifests.RBAC, "rbac/leader_election_role.yaml")
	if err != nil {
		return err
	}
	objs, err := decodeAll(raw)
	if err != nil {
		return fmt.Errorf("decode the leader-election Role: %w", err)
	}
	for _, o := range objs {
		switch o := o.(type) {
		case *rbacv1.Role:
			o.Namespace = ns
		case *rbacv1.RoleBinding:
			o.Namespace = ns
		default:
			return fmt.Errorf("leader_election_role.yaml holds a %T, not a Role or RoleBinding", o)
		}
		if err := cp.createRBACObject(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create %T in %s: %w", o, ns, err)
		}
	}
	return nil
}

// InstallNamespacedOperatorRBAC runs an operator under the namespaced
// install's rules alone (manifests/namespaced): it creates service
// account sa in OperatorNamespace, the namespaced install's ClusterRole
// bound to sa, its Role bound to sa in each of namespaces, and the
// leader-election Role bound to sa in the first of them (where the
// operator keeps its Lease). Objects are named after sa, so the default
// install's stay as they are. It returns a kubeconfig that impersonates
// sa.
func (cp *ControlPlane) InstallNamespacedOperatorRBAC(ctx context.Context, sa string, namespaces []string) (string, error) {
	if len(namespaces) == 0 {
		return "", errors.New("a namespaced install needs at least one namespace")
	}
	account := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: OperatorNamespace}}
	if err := cp.createRBACObject(ctx, account); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", err
	}
	read := func(fsys fs.FS, file string) ([]runtime.Object, error) {
		raw, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, err
		}
		return decodeAll(raw)
	}
	cluster, err := read(manifests.NamespacedRBAC, "namespaced/cluster_role.yaml")
	if err != nil {
		return "", err
	}
	lease, err := read(manifests.RBAC, "rbac/leader_election_role.yaml")
	if err != nil {
		return "", err
	}
	subjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: OperatorNamespace}}
	install := func(objs []runtime.Object, ns string) error {
		for _, o := range objs {
			switch o := o.(type) {
			case *rbacv1.ClusterRole:
				o.Name = sa
			case *rbacv1.ClusterRoleBinding:
				o.Name, o.RoleRef.Name, o.Subjects = sa, sa, subjects
			case *rbacv1.Role:
				o.Name, o.Namespace = sa+"-"+o.Name, ns
			case *rbacv1.RoleBinding:
				o.Name, o.Namespace, o.RoleRef.Name, o.Subjects = sa+"-"+o.Name, ns, sa+"-"+o.RoleRef.Name, subjects
			default:
				return fmt.Errorf("the namespaced install holds a %T", o)
			}
			if err := cp.createRBACObject(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("create %T: %w", o, err)
			}
		}
		return nil
	}
	if err := install(cluster, ""); err != nil {
		return "", err
	}
	for _, ns := range namespaces {
		role, err := read(manifests.NamespacedRBAC, "namespaced/watched/role.yaml")
		if err == nil {
			err = install(role, ns)
		}
		if err != nil {
			return "", err
		}
	}
	if err := install(lease, namespaces[0]); err != nil {
		return "", err
	}
	return cp.serviceAccountKubeconfig(sa, sa+"-kubeconfig")
}
