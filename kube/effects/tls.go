package effects

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/kube/pki"
)

// TLS checks a cluster's CA secret and issues its certificates (see
// objects/tls.go for what is issued, and docs/security.md). Check reads
// the Secrets from Cache when set (a steady sync then sends no request);
// issuing reads them live, so that a certificate is never issued twice
// because a watch had not yet delivered the one just written.
//
// Nothing it returns, logs or records carries key material: problems name
// the Secret and what is wrong with it; due certificates are named by
// their Secret.
type TLS struct {
	Client  kubernetes.Interface
	Anthill versioned.Interface
	// Cache, if set, serves Check's reads (see SecretCache).
	Cache *SecretCache
	// Now replaces time.Now (tests).
	Now func() time.Time
}

// TLSCheck is what a cluster's TLS needs: Problem (a sentence) when the
// CA secret cannot be used, else the certificate Secrets that are due,
// each with why, sorted.
type TLSCheck struct {
	Problem string
	Due     []string
}

func (t *TLS) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

// certItem is one certificate Secret of a cluster.
type certItem struct {
	secret string
	req    pki.Request
	node   *operatorv1alpha1.GlusterNode // nil for etcd and CSI
	reason string                        // why it is due; "" when good
	cert   []byte                        // the current certificate, if any
}

// tlsPlan is everything one check or issue run found.
type tlsPlan struct {
	ca          *pki.CA // nil in external mode
	caPEM       []byte
	bundle      []byte // the bundle the trust Secret should hold
	bundleWhy   string // why the trust Secret must be written; "" when it need not
	items       []certItem
	problem     string
	oldBundle   []byte
	trustExists bool
}

// Check reports what IssueCertificates would do for c, given its nodes.
func (t *TLS) Check(ctx context.Context, c *operatorv1alpha1.GlusterCluster, nodes []*operatorv1alpha1.GlusterNode) (TLSCheck, error) {
	if !objects.TLSEnabled(c) {
		return TLSCheck{}, nil
	}
	var r secretReader = t.live()
	if t.Cache != nil {
		r = t.Cache
	}
	p, err := t.plan(ctx, c, nodes, r)
	if err != nil || p.problem != "" {
		return TLSCheck{Problem: p.problem}, err
	}
	var out TLSCheck
	if p.bundleWhy != "" {
		out.Due = append(out.Due, fmt.Sprintf("%s (%s)", objects.TLSTrustSecretName(c.Name), p.bundleWhy))
	}
	for _, it := range p.items {
		if it.reason != "" {
			out.Due = append(out.Due, fmt.Sprintf("%s (%s)", it.secret, it.reason))
		}
	}
	slices.Sort(out.Due)
	return out, nil
}

func (t *TLS) live() secretReader { return liveSecrets{t.Client.CoreV1()} }

// readCA reads and checks spec.caSecretRef. A problem is returned as a
// sentence, never as an error: the caller waits on it.
func (t *TLS) readCA(ctx context.Context, c *operatorv1alpha1.GlusterCluster, p *tlsPlan, r secretReader) error {
	name, certKey := objects.CASecret(c)
	sec, err := r.Get(ctx, c.Namespace, name)
	if apierrors.IsNotFound(err) {
		p.problem = fmt.Sprintf("CA secret %s/%s (spec.caSecretRef) does not exist.", c.Namespace, name)
		return nil
	}
	if err != nil {
		return fmt.Errorf("read CA secret %s/%s: %w", c.Namespace, name, err)
	}
	now := t.now()
	if objects.IsExternal(c) {
		p.caPEM, err = pki.ParseTrust(sec.Data, certKey, now)
	} else {
		p.ca, err = pki.ParseCA(sec.Data, certKey, now)
		if p.ca != nil {
			p.caPEM = p.ca.CertPEM
		}
	}
	var prob *pki.Problem
	if errors.As(err, &prob) {
		p.problem = fmt.Sprintf("CA secret %s/%s (spec.caSecretRef) %s.", c.Namespace, name, prob.Detail)
		return nil
	}
	return err
}

// plan reads the CA, the trust Secret and every issued Secret of c
// through r.
func (t *TLS) plan(ctx context.Context, c *operatorv1alpha1.GlusterCluster, nodes []*operatorv1alpha1.GlusterNode, r secretReader) (tlsPlan, error) {
	var p tlsPlan
	if err := t.readCA(ctx, c, &p, r); err != nil || p.problem != "" {
		return p, err
	}
	now := t.now()
	trust, err := r.Get(ctx, c.Namespace, objects.TLSTrustSecretName(c.Name))
	switch {
	case err == nil:
		p.trustExists = true
		p.oldBundle = trust.Data[objects.TLSCAKey]
	case !apierrors.IsNotFound(err):
		return p, fmt.Errorf("read trust secret %s/%s: %w", c.Namespace, objects.TLSTrustSecretName(c.Name), err)
	}

	if p.ca != nil {
		p.items = append(p.items,
			certItem{secret: objects.EtcdTLSSecretName(c.Name), req: objects.EtcdCertRequest(c)})
		for _, n := range nodes {
			if n.Spec.Cluster != c.Name || n.Spec.ExternalAddress != "" || n.DeletionTimestamp != nil {
				continue
			}
			p.items = append(p.items, certItem{secret: objects.NodeTLSSecretName(n.Name), req: objects.NodeCertRequest(c, n), node: n})
		}
		for i := range p.items {
			it := &p.items[i]
			sec, err := r.Get(ctx, c.Namespace, it.secret)
			if err != nil && !apierrors.IsNotFound(err) {
				return p, fmt.Errorf("read TLS secret %s/%s: %w", c.Namespace, it.secret, err)
			}
			var certPEM, keyPEM []byte
			if err == nil {
				certPEM, keyPEM = sec.Data[objects.TLSCertKey], sec.Data[objects.TLSKeyKey]
			}
			it.cert = certPEM
			it.reason = p.ca.NeedsRenewal(certPEM, keyPEM, it.req, now)
			if it.reason == "" && it.node != nil && it.node.Annotations[objects.AnnotationCertificate] != CertificateHash(certPEM) {
				it.reason = "not yet on its node"
			}
		}
	}

	// During a rotation the previous CA stays trusted until no server
	// can still present a certificate it signed: every issued
	// certificate is the current CA's, and every node runs the pod
	// template that carries it.
	rolling := false
	for _, it := range p.items {
		if it.reason != "" && it.reason != pki.RenewMissing {
			rolling = true
		}
		if it.node != nil && it.node.Status.Revision != "" && it.node.Status.Revision != objects.NodeTemplateRevision(c, it.node) {
			rolling = true
		}
	}
	if rolling {
		p.bundle = pki.Bundle(now, p.caPEM, p.oldBundle)
	} else {
		p.bundle = pki.Bundle(now, p.caPEM)
	}
	switch {
	case !p.trustExists:
		p.bundleWhy = pki.RenewMissing
	case !bytes.Equal(p.bundle, p.oldBundle):
		p.bundleWhy = "CA changed"
		if !rolling && len(p.oldBundle) > len(p.bundle) {
			p.bundleWhy = "previous CA no longer needed"
		}
	}
	return p, nil
}

// IssueCertificates writes c's trust bundle, then every due certificate.
func (t *TLS) IssueCertificates(ctx context.Context, c *operatorv1alpha1.GlusterCluster, nodes []*operatorv1alpha1.GlusterNode) error {
	if !objects.TLSEnabled(c) {
		return nil
	}
	p, err := t.plan(ctx, c, nodes, t.live())
	if err != nil {
		return err
	}
	if p.problem != "" {
		return errors.New(p.problem)
	}
	// The bundle goes first: a client must trust the new CA before any
	// server presents a certificate it signed.
	if p.bundleWhy != "" {
		if err := t.write(ctx, objects.TLSTrustSecret(c, p.bundle)); err != nil {
			return err
		}
	}
	now := t.now()
	for _, it := range p.items {
		if it.reason == "" {
			continue
		}
		certPEM := it.cert
		if it.reason != "not yet on its node" {
			is, err := p.ca.Issue(it.req, now)
			if err != nil {
				return fmt.Errorf("issue certificate for %s/%s: %w", c.Namespace, it.secret, err)
			}
			if err := t.write(ctx, objects.TLSSecret(c, it.secret, is, p.bundle)); err != nil {
				return err
			}
			certPEM = is.CertPEM
		}
		if it.node != nil {
			if err := t.annotate(ctx, it.node, CertificateHash(certPEM)); err != nil {
				return err
			}
		}
	}
	return nil
}

// write creates or replaces a Secret's data, type and labels.
func (t *TLS) write(ctx context.Context, want *corev1.Secret) error {
	secrets := t.Client.CoreV1().Secrets(want.Namespace)
	live, err := secrets.Get(ctx, want.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		if _, err := secrets.Create(ctx, want, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create Secret %s/%s: %w", want.Namespace, want.Name, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("read Secret %s/%s: %w", want.Namespace, want.Name, err)
	}
	if live.Type != want.Type {
		// A Secret's type is immutable.
		if err := secrets.Delete(ctx, want.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &live.UID}}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("replace Secret %s/%s: %w", want.Namespace, want.Name, err)
		}
		if _, err := secrets.Create(ctx, want, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create Secret %s/%s: %w", want.Namespace, want.Name, err)
		}
		return nil
	}
	upd := live.DeepCopy()
	upd.Data = want.Data
	if upd.Labels == nil {
		upd.Labels = map[string]string{}
	}
	for k, v := range want.Labels {
		upd.Labels[k] = v
	}
	upd.OwnerReferences = want.OwnerReferences
	if _, err := secrets.Update(ctx, upd, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update Secret %s/%s: %w", want.Namespace, want.Name, err)
	}
	return nil
}

// annotate records a node's certificate hash with a merge patch.
func (t *TLS) annotate(ctx context.Context, n *operatorv1alpha1.GlusterNode, hash string) error {
	if n.Annotations[objects.AnnotationCertificate] == hash {
		return nil
	}
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"annotations": map[string]string{objects.AnnotationCertificate: hash}},
	})
	if err != nil {
		return fmt.Errorf("encode certificate annotation: %w", err)
	}
	if _, err := t.Anthill.OperatorV1alpha1().GlusterNodes(n.Namespace).Patch(ctx, n.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("annotate GlusterNode %s/%s with its certificate: %w", n.Namespace, n.Name, err)
	}
	return nil
}

// CertificateHash is a short, public fingerprint of a PEM certificate (a
// hash of its DER bytes; the certificate is public, its key is never
// hashed here). "" when there is none.
func CertificateHash(certPEM []byte) string {
	b, _ := pem.Decode(certPEM)
	if b == nil {
		return ""
	}
	sum := sha256.Sum256(b.Bytes)
	return hex.EncodeToString(sum[:8])
}

// TrustBundle returns the CA bundle the operator trusts for c's servers:
// the trust Secret anthill writes, or (before it exists) the CA
// certificate of spec.caSecretRef itself. nil when c has no TLS.
func (t *TLS) TrustBundle(ctx context.Context, c *operatorv1alpha1.GlusterCluster) ([]byte, string, error) {
	return trustBundle(ctx, t.live(), c)
}

// trustBundle reads the CA bundle of c for a client and a version string
// that changes with it.
func trustBundle(ctx context.Context, r secretReader, c *operatorv1alpha1.GlusterCluster) ([]byte, string, error) {
	if !objects.TLSEnabled(c) {
		return nil, "", nil
	}
	trust, err := r.Get(ctx, c.Namespace, objects.TLSTrustSecretName(c.Name))
	if err == nil && len(trust.Data[objects.TLSCAKey]) > 0 {
		return trust.Data[objects.TLSCAKey], "trust:" + trust.ResourceVersion, nil
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, "", fmt.Errorf("read trust secret %s/%s: %w", c.Namespace, objects.TLSTrustSecretName(c.Name), err)
	}
	name, certKey := objects.CASecret(c)
	sec, err := r.Get(ctx, c.Namespace, name)
	if err != nil {
		return nil, "", fmt.Errorf("read CA secret %s/%s: %w", c.Namespace, name, err)
	}
	if len(sec.Data[certKey]) == 0 {
		return nil, "", fmt.Errorf("CA secret %s/%s has no key %q", c.Namespace, name, certKey)
	}
	return sec.Data[certKey], "ca:" + sec.ResourceVersion, nil
}

// issueNode issues n's certificate before n is created, so that its first
// pod template already carries it (no roll right after it joins), and
// records the hash on n.
func (t *TLS) issueNode(ctx context.Context, c *operatorv1alpha1.GlusterCluster, n *operatorv1alpha1.GlusterNode) error {
	var p tlsPlan
	if err := t.readCA(ctx, c, &p, t.live()); err != nil {
		return err
	}
	if p.problem != "" {
		return errors.New(p.problem)
	}
	bundle, _, err := trustBundle(ctx, t.live(), c)
	if err != nil {
		return err
	}
	is, err := p.ca.Issue(objects.NodeCertRequest(c, n), t.now())
	if err != nil {
		return fmt.Errorf("issue certificate for GlusterNode %s/%s: %w", n.Namespace, n.Name, err)
	}
	if err := t.write(ctx, objects.TLSSecret(c, objects.NodeTLSSecretName(n.Name), is, bundle)); err != nil {
		return err
	}
	if n.Annotations == nil {
		n.Annotations = map[string]string{}
	}
	n.Annotations[objects.AnnotationCertificate] = CertificateHash(is.CertPEM)
	return nil
}
