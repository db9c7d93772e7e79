// Command anthill-image packs the static anthill binary into an OCI image
// without a container engine: an OCI image layout directory and a tarball
// that `docker load`, `podman load` and crane accept. Given one binary per
// architecture (--binary ARCH=PATH, repeated), the layout holds one image
// index over every platform (what a registry serves a multi-arch pull) and
// there is one tarball per platform, anthill-linux-ARCH.tar, since a
// docker-archive holds one platform. The same inputs give
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
	"slices"
	"strings"
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
	binaries                                   binaries
	out, repo, version, revision, source, arch string
	epoch                                      int64
}

// binaries is the repeated --binary flag: PATH (of --arch) or ARCH=PATH.
type binaries []string

func (b *binaries) String() string     { return strings.Join(*b, ",") }
func (b *binaries) Set(v string) error { *b = append(*b, v); return nil }

// platformBinary is one architecture's binary.
type platformBinary struct{ arch, path string }

// split reads the --binary values; a bare PATH is --arch's binary.
func (b binaries) split(defaultArch string) ([]platformBinary, error) {
	var out []platformBinary
	seen := map[string]bool{}
	for _, v := range b {
		arch, path, ok := strings.Cut(v, "=")
		if !ok {
			arch, path = defaultArch, v
		}
		if arch == "" || path == "" || seen[arch] {
			return nil, fmt.Errorf("--binary %q: want PATH or ARCH=PATH, one per architecture", v)
		}
		seen[arch] = true
		out = append(out, platformBinary{arch: arch, path: path})
	}
	return out, nil
}

func main() {
	var o options
	flag.Var(&o.binaries, "binary", "the static anthill binary to ship: PATH (built for --arch) or ARCH=PATH, repeated for a multi-arch image")
	flag.StringVar(&o.out, "out", "bin/image", "directory for oci/ (an OCI image layout) and anthill.tar (anthill-linux-ARCH.tar each when multi-arch)")
	flag.StringVar(&o.repo, "repo", "quay.io/gluster/anthill", "image repository; the tag is --version")
	flag.StringVar(&o.version, "version", "", "the project version (VERSION), the image tag")
	flag.StringVar(&o.revision, "revision", "", "the git commit the binary was built from")
	flag.StringVar(&o.source, "source", "https://github.com/gluster/anthill", "the source repository URL")
	flag.StringVar(&o.arch, "arch", "amd64", "the GOARCH of a --binary given as a bare PATH")
	flag.Int64Var(&o.epoch, "epoch", 0, "seconds since 1970 for every file time and the image's creation time (the commit time)")
	var r rootfsOptions
	flag.StringVar(&r.dir, "rootfs", "", "pack this root file system instead of the anthill binary (with --ref and --config): a test image")
	flag.StringVar(&r.ref, "ref", "", "with --rootfs: the image reference (a tag)")
	flag.StringVar(&r.config, "config", "{}", "with --rootfs: the image configuration as JSON (Entrypoint, Cmd, Env, ...)")
	flag.Parse()
	if r.dir != "" {
		r.out, r.arch, r.epoch = o.out, o.arch, o.epoch
		if err := packRootfs(r); err != nil {
			fmt.Fprintln(os.Stderr, "anthill-image:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "anthill-image:", err)
		os.Exit(1)
	}
}

// Annotations naming the image in the layout's index.json: the OCI one
// (crane, skopeo) and containerd's, which `ctr images import` and `kind
// load image-archive` name the imported image by.
const (
	refNameAnnotation        = "org.opencontainers.image.ref.name"
	containerdNameAnnotation = "io.containerd.image.name"
)

func run(o options) error {
	bins, err := o.binaries.split(o.arch)
	if err != nil {
		return err
	}
	if len(bins) == 0 || o.version == "" || o.revision == "" {
		return fmt.Errorf("--binary, --version and --revision are required")
	}
	ref, err := name.NewTag(o.repo + ":" + o.version)
	if err != nil {
		return err
	}
	when := time.Unix(o.epoch, 0).UTC()
	p, names, err := newLayout(o.out, ref)
	if err != nil {
		return err
	}

	if len(bins) == 1 {
		img, err := image(o, bins[0], when)
		if err != nil {
			return err
		}
		return writeImage(p, names, img, ref, filepath.Join(o.out, "anthill.tar"))
	}

	// Platforms in a fixed order, so the index (and its digest) does not
	// depend on the order of the flags.
	slices.SortFunc(bins, func(a, b platformBinary) int { return strings.Compare(a.arch, b.arch) })
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	var size int64
	for _, b := range bins {
		img, err := image(o, b, when)
		if err != nil {
			return err
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: b.arch}},
		})
		if err := tarball.WriteToFile(filepath.Join(o.out, "anthill-linux-"+b.arch+".tar"), ref, img); err != nil {
			return err
		}
		n, err := imageSize(img)
		if err != nil {
			return err
		}
		size += n
	}
	if err := p.AppendIndex(idx, names); err != nil {
		return err
	}
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("%s@%s (%d bytes compressed, %d platforms)\n", ref, digest, size, len(bins))
	return nil
}

// newLayout makes out/oci an empty OCI layout, and the annotations that
// name ref in it.
func newLayout(out string, ref name.Tag) (layout.Path, layout.Option, error) {
	dir := filepath.Join(out, "oci")
	if err := os.RemoveAll(dir); err != nil {
		return "", nil, err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return "", nil, err
	}
	return p, layout.WithAnnotations(map[string]string{refNameAnnotation: ref.String(), containerdNameAnnotation: ref.String()}), nil
}

// writeImage puts img, named ref, into the layout p and into the tarball
// tarPath, and prints its digest and compressed size.
func writeImage(p layout.Path, names layout.Option, img v1.Image, ref name.Tag, tarPath string) error {
	if err := p.AppendImage(img, names); err != nil {
		return err
	}
	if err := tarball.WriteToFile(tarPath, ref, img); err != nil {
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

// image is the image of one architecture's binary.
func image(o options, b platformBinary, when time.Time) (v1.Image, error) {
	bin, err := os.ReadFile(b.path)
	if err != nil {
		return nil, err
	}
	base, err := tarLayer(when, baseFiles())
	if err != nil {
		return nil, fmt.Errorf("base layer: %w", err)
	}
	app, err := tarLayer(when, []file{
		{path: "usr/", dir: true}, {path: "usr/local/", dir: true}, {path: "usr/local/bin/", dir: true},
		{path: binPath, mode: 0o755, data: bin},
	})
	if err != nil {
		return nil, fmt.Errorf("binary layer: %w", err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	if img, err = mutate.AppendLayers(img, base, app); err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", b.arch
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
	return mutate.ConfigFile(img, cf)
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
