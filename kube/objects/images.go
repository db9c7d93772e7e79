package objects

import (
	"cmp"
	"fmt"
	"strings"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// Images: every image anthill runs but its own, in one place. Each is a
// reference upstream published, pinned (a digest where upstream only ever
// pushed moving tags), and overridable: the GD2 image per cluster
// (spec.gluster.image, GD2Image), the file driver per cluster (spec.csi.fileImage),
// and every image the builders default to per operator (its --<name>-image
// flags, UseImages). docs/install.md ("Images anthill runs"), the operator
// Deployment's flags, the chart's values and the OLM CSV's relatedImages
// list the same references; a test in cmd/anthill keeps them equal.

// Images are the default images of the components anthill runs.
type Images struct {
	// GD2 is the GD2 server: gluster/glusterd2-nightly, the only GD2 image
	// upstream built (sheet §1), at the digest GCS locked for its last
	// release (gcs@a55daa2: deploy/templates/gcs-manifests/gcs-gd2.yml.j2).
	// It is what a cluster that names no spec.gluster.image runs, at every
	// spec.gluster.version: upstream tagged it by build date, never by
	// Gluster version (GD2Image).
	GD2 string
	// Etcd is etcd's release image (sheet §2).
	Etcd string
	// CSIFile is the GD2-era file driver at the digest GCS locked for the
	// same release (gcs@a55daa2: deploy/templates/gcs-manifests/gcs-csi.yml.j2),
	// the image name its CI pushed then.
	CSIFile string
	// CSIProvisioner and CSINodeRegistrar are the kubernetes-csi sidecars
	// (sheet §5).
	CSIProvisioner, CSINodeRegistrar string
	// CSISnapshotter is the kubernetes-csi external snapshotter, run beside
	// the provisioner when a cluster enables spec.csi.snapshots
	// (SnapshotterContract).
	CSISnapshotter string
}

// DefaultImages are the images anthill runs unless a cluster names others.
var DefaultImages = Images{
	GD2:              "docker.io/gluster/glusterd2-nightly@sha256:f964e1462b4a4a23a85c3e43d91857a1650f8dc10b08fa1deb86dcadbfcd75d2",
	Etcd:             "quay.io/coreos/etcd:v3.5.17",
	CSIFile:          "docker.io/gluster/gluster-csi-driver@sha256:5540df795371972b9a49bc8034c42876793d0cc1a54e2752ade3f99ae2afd68b",
	CSIProvisioner:   "registry.k8s.io/sig-storage/csi-provisioner:v5.2.0",
	CSINodeRegistrar: "registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.13.0",
	CSISnapshotter:   "registry.k8s.io/sig-storage/csi-snapshotter:v8.2.0",
}

// images are the images the builders use: DefaultImages unless the
// operator was started with others (UseImages).
var images = DefaultImages

// UseImages makes the builders use imgs from now on; the operator calls it
// once at start, before any builder runs. The GD2 image is not among
// them (the operator has no flag for it; a cluster names its own mirror
// in spec.gluster.image), and stays DefaultImages.GD2 when empty. Every
// other image must be set.
func UseImages(imgs Images) error {
	for _, n := range imgs.Named() {
		if n[0] != NameGD2Image && n[1] == "" {
			return fmt.Errorf("image %s is empty", n[0])
		}
	}
	images = imgs
	return nil
}

// NameGD2Image is the name of the GD2 image in Named: the one image a
// cluster names itself when it does not run the pin, so the operator has
// no flag for it.
const NameGD2Image = "glusterd2"

// Named lists the images with a name each, in a fixed order: the names
// are the keys of the chart's values and of the CSV's relatedImages.
func (i Images) Named() [][2]string {
	return [][2]string{
		{NameGD2Image, i.GD2},
		{"etcd", i.Etcd},
		{"glusterfs-csi-driver", i.CSIFile},
		{"csi-provisioner", i.CSIProvisioner},
		{"csi-node-driver-registrar", i.CSINodeRegistrar},
		{"csi-snapshotter", i.CSISnapshotter},
	}
}

// Field is the image of i named name (one of Named's names), and false
// for an unknown name.
func (i *Images) Field(name string) (*string, bool) {
	switch name {
	case NameGD2Image:
		return &i.GD2, true
	case "etcd":
		return &i.Etcd, true
	case "glusterfs-csi-driver":
		return &i.CSIFile, true
	case "csi-provisioner":
		return &i.CSIProvisioner, true
	case "csi-node-driver-registrar":
		return &i.CSINodeRegistrar, true
	case "csi-snapshotter":
		return &i.CSISnapshotter, true
	}
	return nil, false
}

// GlusterImage is the image a node runs for version: image itself when it
// already names a tag or digest (the admin pinned it), else image:version.
// An empty version leaves the image as it is.
func GlusterImage(image, version string) string {
	if version == "" || strings.Contains(image, "@") {
		return image
	}
	last := image[strings.LastIndex(image, "/")+1:]
	if strings.Contains(last, ":") {
		return image
	}
	return image + ":" + version
}

// GD2Image is the image c's servers run at version: spec.gluster.image
// (GlusterImage: tagged with version unless pinned), else the pinned GD2
// image (Images.GD2). Upstream built GD2 only as a nightly image, with no
// tag per Gluster version, so the pinned image is the same at every
// version: a version change restarts the servers on it and records the
// new version, and changes the software only with an image of the admin's.
func GD2Image(c *operatorv1alpha1.GlusterCluster, version string) string {
	if g := c.Spec.Gluster; g != nil && g.Image != "" {
		return GlusterImage(g.Image, version)
	}
	return cmp.Or(images.GD2, DefaultImages.GD2)
}
