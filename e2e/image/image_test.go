//go:build e2e

// Package image tests the operator image that `make image` builds: its
// config, its files, that the binary in it runs, and that it is
// reproducible.
package image

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/gluster/anthill/e2e/framework"
)

// ociDescriptor, ociIndex, ociManifest and ociConfig are the parts of the
// OCI image spec this test reads, decoded with the standard library so the
// test does not trust the library that wrote them.
type ociDescriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations"`
}

type ociIndex struct {
	Manifests []ociDescriptor `json:"manifests"`
}

type ociManifest struct {
	MediaType string          `json:"mediaType"`
	Config    ociDescriptor   `json:"config"`
	Layers    []ociDescriptor `json:"layers"`
}

type ociConfig struct {
	OS           string `json:"os"`
	Architecture string `json:"architecture"`
	Config       struct {
		Entrypoint []string          `json:"Entrypoint"`
		Cmd        []string          `json:"Cmd"`
		User       string            `json:"User"`
		Labels     map[string]string `json:"Labels"`
	} `json:"config"`
}

// build runs what `make image` runs, into dir, and returns the manifest
// digest it printed.
func build(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(framework.RepoRoot(), "hack", "build-image.sh"), dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hack/build-image.sh: %v", err)
	}
	line := strings.TrimSpace(string(out))
	t.Logf("built %s", line)
	_, rest, ok := strings.Cut(line, "@")
	if !ok {
		t.Fatalf("build-image printed %q, want REF@DIGEST (SIZE)", line)
	}
	return strings.Fields(rest)[0]
}

// blob reads and verifies a blob of the layout at dir.
func blob(t *testing.T, dir string, d ociDescriptor) []byte {
	t.Helper()
	algo, hexd, _ := strings.Cut(d.Digest, ":")
	raw, err := os.ReadFile(filepath.Join(dir, "blobs", algo, hexd))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	if algo != "sha256" || hex.EncodeToString(sum[:]) != hexd || int64(len(raw)) != d.Size {
		t.Fatalf("blob %s does not match its descriptor", d.Digest)
	}
	return raw
}

func decode(t *testing.T, raw []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatal(err)
	}
}

// TestImage builds the image, reads its OCI layout and checks what the
// issue asks for: entrypoint `anthill operator`, a numeric non-root user,
// the OCI labels, CA certificates and no shell; then runs the binary in
// the image's root filesystem (chrooted, as the image's user, when the
// test runs as root) with `version`, and builds again to check the digest
// is the same.
func TestImage(t *testing.T) {
	root := framework.RepoRoot()
	rawVersion, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(string(rawVersion))
	out := t.TempDir()
	digest := build(t, out)
	layoutDir := filepath.Join(out, "oci")

	var index ociIndex
	raw, err := os.ReadFile(filepath.Join(layoutDir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	decode(t, raw, &index)
	if len(index.Manifests) != 1 || index.Manifests[0].Digest != digest {
		t.Fatalf("index.json lists %+v, want the one manifest %s", index.Manifests, digest)
	}
	if ref := index.Manifests[0].Annotations["org.opencontainers.image.ref.name"]; ref != "quay.io/gluster/anthill:"+version {
		t.Errorf("image ref %q, want quay.io/gluster/anthill:%s", ref, version)
	}
	var m ociManifest
	decode(t, blob(t, layoutDir, index.Manifests[0]), &m)
	if m.MediaType != "application/vnd.oci.image.manifest.v1+json" {
		t.Errorf("manifest media type %q, want an OCI manifest", m.MediaType)
	}
	var cfg ociConfig
	decode(t, blob(t, layoutDir, m.Config), &cfg)

	if want := []string{"/usr/local/bin/anthill", "operator"}; !slices.Equal(cfg.Config.Entrypoint, want) || len(cfg.Config.Cmd) != 0 {
		t.Errorf("entrypoint %q cmd %q, want %q and no cmd", cfg.Config.Entrypoint, cfg.Config.Cmd, want)
	}
	if cfg.Config.User != "65532:65532" {
		t.Errorf("user %q, want the numeric non-root 65532:65532", cfg.Config.User)
	}
	if cfg.OS != "linux" || cfg.Architecture != runtime.GOARCH {
		t.Errorf("platform %s/%s, want linux/%s", cfg.OS, cfg.Architecture, runtime.GOARCH)
	}
	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	labels := cfg.Config.Labels
	if labels["org.opencontainers.image.version"] != version {
		t.Errorf("version label %q, want %q (VERSION)", labels["org.opencontainers.image.version"], version)
	}
	if rev := labels["org.opencontainers.image.revision"]; !strings.HasPrefix(rev, strings.TrimSpace(string(head))) {
		t.Errorf("revision label %q, want the commit %s", rev, head)
	}
	if labels["org.opencontainers.image.source"] == "" {
		t.Error("no org.opencontainers.image.source label")
	}

	fsRoot := t.TempDir()
	for _, l := range m.Layers {
		extract(t, blob(t, layoutDir, l), fsRoot)
	}
	for _, shell := range []string{"bin/sh", "bin/bash", "usr/bin/sh"} {
		if _, err := os.Lstat(filepath.Join(fsRoot, shell)); err == nil {
			t.Errorf("the image has a shell: /%s", shell)
		}
	}
	pemCerts, err := os.ReadFile(filepath.Join(fsRoot, "etc/ssl/certs/ca-certificates.crt"))
	if err != nil {
		t.Fatal(err)
	}
	if pool := x509.NewCertPool(); !pool.AppendCertsFromPEM(pemCerts) || bytes.Count(pemCerts, []byte("BEGIN CERTIFICATE")) < 100 {
		t.Errorf("the CA bundle holds %d certificates, want the public roots", bytes.Count(pemCerts, []byte("BEGIN CERTIFICATE")))
	}

	cmd := exec.Command(filepath.Join(fsRoot, "usr/local/bin/anthill"), "version")
	if os.Geteuid() == 0 {
		cmd = exec.Command("/usr/local/bin/anthill", "version")
		cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: fsRoot, Credential: &syscall.Credential{Uid: 65532, Gid: 65532}}
		cmd.Dir = "/"
	} else {
		t.Log("not root: running the image's binary without chroot")
	}
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("anthill version in the image: %v\n%s", err, got)
	}
	if !strings.HasPrefix(string(got), "anthill "+version+" ") {
		t.Errorf("anthill version printed %q, want it to start %q", got, "anthill "+version+" ")
	}

	if again := build(t, t.TempDir()); again != digest {
		t.Errorf("a second build of the same tree gave %s, the first %s: the image is not reproducible", again, digest)
	}
}

// extract unpacks a gzipped tar layer into dir.
func extract(t *testing.T, layer []byte, dir string) {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(layer))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p, h.FileInfo().Mode().Perm()|0o111); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, data, h.FileInfo().Mode().Perm()); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("layer entry %s of type %c: the image should hold only files and directories", h.Name, h.Typeflag)
		}
	}
}
