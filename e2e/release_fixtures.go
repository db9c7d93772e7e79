package e2e

import (
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// releaseFixture is what one release left persisted at one point of a
// workflow in flight: the GlusterCluster and its GlusterNodes (spec and
// status, as the API server returned them) and the GD2 metadata on the
// cluster's peers and volumes. The handover test writes one per point
// when ANTHILL_RELEASE_FIXTURES names a directory; they are kept under
// testdata/releases/<version>/<point>.json, and TestReleaseFixturesAreReadable
// holds the current code to reading every one of them.
type releaseFixture struct {
	Release        string                          `json:"release"`
	Point          string                          `json:"point"`
	Cluster        operatorv1alpha1.GlusterCluster `json:"cluster"`
	Nodes          []operatorv1alpha1.GlusterNode  `json:"nodes"`
	PeerMetadata   map[string]map[string]string    `json:"peerMetadata"`
	VolumeMetadata map[string]map[string]string    `json:"volumeMetadata"`
}

// The points of a workflow in flight a fixture is taken at: right before
// the current operator takes over from the release.
var releaseFixturePoints = []string{"mid-drain", "mid-upgrade", "mid-recovery"}

// releaseFixturesEnv names the directory the handover test writes the
// fixtures of the release it runs into (unset: none are written).
const releaseFixturesEnv = "ANTHILL_RELEASE_FIXTURES"
