// Package pki issues the TLS certificates of a Gluster cluster from the CA
// key pair the cluster's spec.caSecretRef names. It is pure apart from the
// randomness of keys and serials: it reads no API and writes no object.
// Callers decide what to issue (names, usages) and where the result lives;
// this package checks the CA, signs leaves, tells when a leaf must be
// renewed and builds the trust bundle that spans a CA rotation.
//
// Nothing here formats key material into an error: every error names the
// problem and, at most, a certificate's subject or validity.
package pki
