// Command anthill-image packs the static anthill binary into an OCI image
// without a container engine: an OCI image layout directory and a tarball
// that `docker load`, `podman load` and crane accept. The same inputs give
// the same image digest: file times come from --epoch (the commit time),
// owners are root, and nothing from the build machine's clock or user is
// recorded. hack/build-image.sh runs it; see docs/install.md for how a
// release pushes the result.
package main

import (
	"archive/tar"
	"bytes"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// The image runs as this numeric user and group: not root, and numeric so
// that runAsNonRoot can verify it without reading /etc/passwd.
const (
	uid = 65532
	gid = 65532
	// binPath is where the binary lives in the image.
	binPath = "usr/local/bin/anthill"
)

type options struct {
	binary, out, repo, version, revision, source, arch string
	epoch                                              int64
}

func main() {
	var o options
	flag.StringVar(&o.binary, "binary", "", "the static anthill binary to ship")
	flag.StringVar(&o.out, "out", "bin/image", "directory for oci/ (an OCI image layout) and anthill.tar")
	flag.StringVar(&o.repo, "repo", "quay.io/gluster/anthill", "image repository; the tag is --version")
	flag.StringVar(&o.version, "version", "", "the project version (VERSION), the image tag")
	flag.StringVar(&o.revision, "revision", "", "the git commit the binary was built from")
	flag.StringVar(&o.source, "source", "https://github.com/gluster/anthill", "the source repository URL")
	flag.StringVar(&o.arch, "arch", "amd64", "the binary's GOARCH")
	flag.Int64Var(&o.epoch, "epoch", 0, "seconds since 1970 for every file time and the image's creation time (the commit time)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "anthill-image:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if o.binary == "" || o.version == "" || o.revision == "" {
		return fmt.Errorf("--binary, --version and --revision are required")
	}
	ref, err := name.NewTag(o.repo + ":" + o.version)
	if err != nil {
		return err
	}
	bin, err := os.ReadFile(o.binary)
	if err != nil {
		return err
	}
	when := time.Unix(o.epoch, 0).UTC()
	base, err := tarLayer(when, baseFiles())
	if err != nil {
		return fmt.Errorf("base layer: %w", err)
	}
	app, err := tarLayer(when, []file{
		{path: "usr/", dir: true}, {path: "usr/local/", dir: true}, {path: "usr/local/bin/", dir: true},
		{path: binPath, mode: 0o755, data: bin},
	})
	if err != nil {
		return fmt.Errorf("binary layer: %w", err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	if img, err = mutate.AppendLayers(img, base, app); err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", o.arch
	cf.Created = v1.Time{Time: when}
	cf.Config = v1.Config{
		Entrypoint: []string{"/" + binPath, "operator"},
		User:       fmt.Sprintf("%d:%d", uid, gid),
		WorkingDir: "/",
		Env:        []string{"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"},
		Labels: map[string]string{
			"org.opencontainers.image.source":      o.source,
			"org.opencontainers.image.revision":    o.revision,
			"org.opencontainers.image.version":     o.version,
			"org.opencontainers.image.title":       "anthill",
			"org.opencontainers.image.description": "Kubernetes operator for Gluster storage clusters managed through glusterd2",
			"org.opencontainers.image.licenses":    "Apache-2.0",
			"org.opencontainers.image.created":     when.Format(time.RFC3339),
		},
	}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return err
	}

	dir := filepath.Join(o.out, "oci")
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref.String()})); err != nil {
		return err
	}
	if err := tarball.WriteToFile(filepath.Join(o.out, "anthill.tar"), ref, img); err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	size, err := imageSize(img)
	if err != nil {
		return err
	}
	fmt.Printf("%s@%s (%d bytes compressed)\n", ref, digest, size)
	return nil
}

// file is one entry of a layer.
type file struct {
	path string
	dir  bool
	mode int64
	data []byte
}

// baseFiles are what the binary needs from an operating system: CA
// certificates to verify GD2's and the API server's TLS, and a passwd and
// group entry naming the numeric user. There is no shell.
func baseFiles() []file {
	var pemCerts bytes.Buffer
	for r := range bundle.Roots() {
		// A root with a constraint (a distrust-after date) cannot be
		// expressed in a PEM bundle; leaving it out is the safe side.
		if r.Constraint != nil {
			continue
		}
		_ = pem.Encode(&pemCerts, &pem.Block{Type: "CERTIFICATE", Bytes: r.Certificate})
	}
	return []file{
		{path: "etc/", dir: true},
		{path: "etc/passwd", mode: 0o644, data: fmt.Appendf(nil, "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", uid, gid)},
		{path: "etc/group", mode: 0o644, data: fmt.Appendf(nil, "root:x:0:\nnonroot:x:%d:\n", gid)},
		{path: "etc/ssl/", dir: true}, {path: "etc/ssl/certs/", dir: true},
		{path: "etc/ssl/certs/ca-certificates.crt", mode: 0o644, data: pemCerts.Bytes()},
		{path: "home/", dir: true},
		{path: "home/nonroot/", dir: true, mode: 0o700},
		{path: "tmp/", dir: true, mode: 0o1777},
	}
}

// tarLayer builds a layer from files in the given order, every entry owned
// by root (the home directory by the user) and dated when.
func tarLayer(when time.Time, files []file) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: f.path, Mode: f.mode, ModTime: when, Format: tar.FormatPAX}
		if f.dir {
			h.Typeflag = tar.TypeDir
			if h.Mode == 0 {
				h.Mode = 0o755
			}
			if f.path == "home/nonroot/" {
				h.Uid, h.Gid = uid, gid
			}
		} else {
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(f.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	raw := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(raw)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

// imageSize is the sum of the compressed layers, the manifest and the
// config: what a registry stores and a node pulls.
func imageSize(img v1.Image) (int64, error) {
	m, err := img.Manifest()
	if err != nil {
		return 0, err
	}
	total := m.Config.Size
	for _, l := range m.Layers {
		total += l.Size
	}
	raw, err := img.RawManifest()
	return total + int64(len(raw)), err
}
