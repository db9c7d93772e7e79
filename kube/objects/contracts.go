package objects

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// Contracts: what each image anthill runs reads and needs, from its
// sources, as data. The reference sheet is the project's
// reference/container-contracts.md (facts from the upstream sources, cited
// there as repo@commit:path); each contract names the section it comes
// from. TestEveryContainerKeepsItsImageContract holds every container the
// builders can produce to its contract, so an argument, variable or mount
// that no image reads cannot creep back in.

// Contract is one image's contract.
type Contract struct {
	// Component names what runs, for messages.
	Component string
	// Source cites the facts: the sheet's section and the upstream files.
	Source string
	// Command is what the container's command must be: nil means the
	// image's own entrypoint, and a container must then set none.
	Command []string
	// Preludes are the scripts a container may run from the image's shell
	// before Command: its command is then Shell, "-c", Script, then
	// Command and its flags, which the script execs.
	Preludes []Prelude
	// Flags are the flags the program accepts (an unknown flag makes each
	// of these programs exit at start); Required must be given.
	Flags, Required []string
	// Env are the variables the program reads. A trailing "*" makes an
	// entry a prefix. A variable the container sets only for Kubernetes to
	// expand into an argument ($(NAME)) is allowed besides.
	Env []string
	// Mounts are the paths the program needs mounted; OptionalMounts are
	// further paths it reads when a feature is on (a certificate, host
	// devices). A mount at any other path is handed to nothing.
	Mounts, OptionalMounts []string
	// Privileged and Capabilities are the privileges it needs.
	Privileged   bool
	Capabilities []corev1.Capability
	// Ports are the container ports it serves.
	Ports []int32
	// LivenessPath, when set, is the HTTP path a liveness probe must GET.
	LivenessPath string
	// DriverName is the CSI driver name the program registers
	// (GetPluginInfo), fixed in its code.
	DriverName string
	// Unbuilt says no image of the component exists to run.
	Unbuilt bool
	// Departures say where anthill runs the image differently from the
	// GD2-era deployments, and why.
	Departures []string
}

// Prelude is a script run from an image's own shell before the image's
// program, which it execs with the container's remaining arguments ($0
// and "$@"), so that the program still receives the container's signals.
type Prelude struct {
	// Shell is the image's shell.
	Shell string
	// Script is the whole script, ending in exec "$0" "$@".
	Script string
	// Source cites what the script's commands are in the image and why
	// they are needed.
	Source string
}

// GD2 command line: glusterd2 itself as the container's command (not the
// image's systemd), its packaged configuration, and its log on stdout.
const (
	gd2Binary     = "/usr/sbin/glusterd2"
	gd2ConfigFile = "/etc/glusterd2/glusterd2.toml"
)

// claimDeviceDir is where a node's brick claims appear in its container:
// a directory no host has, so a claim can never be taken for, or clash
// with, a host disk the privileged container also sees (sheet §6).
const claimDeviceDir = "/dev/anthill"

// loopDeviceDir is where a node's loop-provisioner claims are mounted: a
// directory of the image's that nothing else uses.
const loopDeviceDir = "/var/lib/anthill/devices"

// gd2FlagKeys are the configuration keys glusterd2 also takes as flags
// --<key> (glusterd2@54ce5f6f: glusterd2/conf/config.go initFlags,
// glusterd2/store/config.go InitFlags; the built program's --help lists
// exactly these, and e2e/realgd2 holds the list to it).
var gd2FlagKeys = []string{
	"localstatedir", "rundir", "logdir", "logfile", "loglevel", "pidfile", "statedump", "profiling",
	"clientaddress", "peeraddress", "cert-file", "key-file",
	"noembed", "etcdendpoints", "etcd-client-cert-file", "etcd-client-key-file", "etcd-client-ca-file",
	"etcdcurls", "etcdpurls",
}

// gd2FileKeys are the keys GD2 reads from its configuration only: the
// TOML file or the variable GD2_<KEY> (viper's AutomaticEnv), never a
// flag, so --restauth or --usetls would stop glusterd2 at start-up
// (glusterd2@54ce5f6f: servers/rest/rest.go, store/config.go,
// plugins/blockvolume/blockprovider/gluster-block/config.go). Not
// etcdlogfile, which the reference sheet lists: store/config.go declares
// it and nothing reads it, and the built program does not hold the name.
var gd2FileKeys = []string{
	"restauth", "usetls", "ca-file",
	"gluster-block-hostaddr", "gluster-block-cacert", "gluster-block-user", "gluster-block-secret", "gluster-block-insecure",
}

// GD2FlagKeys and GD2FileKeys return the two lists, for the test that
// reads the built program.
func GD2FlagKeys() []string { return slices.Clone(gd2FlagKeys) }

// GD2FileKeys: see GD2FlagKeys.
func GD2FileKeys() []string { return slices.Clone(gd2FileKeys) }

func gd2Flags() []string {
	out := []string{"--config"}
	for _, k := range gd2FlagKeys {
		out = append(out, "--"+k)
	}
	return out
}

func gd2ContractEnv() []string {
	// Identity comes from the environment only (gdctx/id.go).
	out := []string{"GD2_PEER_ID", "GD2_CLUSTER_ID"}
	for _, k := range slices.Concat(gd2FlagKeys, gd2FileKeys) {
		out = append(out, "GD2_"+envKey(k))
	}
	return out
}

func envKey(k string) string {
	b := []byte(k)
	for i, c := range b {
		switch {
		case c == '-':
			b[i] = '_'
		case c >= 'a' && c <= 'z':
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// GD2Contract is the GD2 server image's.
var GD2Contract = Contract{
	Component: "glusterd2",
	Source: "container-contracts.md §1 (glusterd2@54ce5f6f: extras/nightly-container/build.sh, provision.yml, " +
		"extras/systemd/glusterd2.service, glusterd2/conf/config.go, glusterd2/gdctx/id.go, pkg/lvmutils/utils.go; " +
		"gcs@c3693f3: deploy/templates/gcs-manifests/gcs-gd2.yml.j2)",
	Command:  []string{gd2Binary},
	Preludes: []Prelude{GD2LVMPrelude},
	Flags:    gd2Flags(),
	Required: []string{"--config", "--logfile"},
	Env:      gd2ContractEnv(),
	// The state directory (peer id, auth file); with LVM (not with loop
	// devices) LVM's lock directory and the host's kernel modules
	// (dm_thin_pool for thin LVs), which are optional mounts below.
	Mounts: []string{GD2StateDir},
	// The shared REST secret at GD2's auth file, the node's certificate
	// (cert-file, key-file, etcd-client-*), the host's /dev for host devices
	// and loop devices, and the loop provisioner's claims (GD2's loop
	// devices are directories it keeps brick images in).
	OptionalMounts: append([]string{GD2StateDir + "/" + authFileName, gd2TLSDir, "/dev", "/run/lvm", "/usr/lib/modules"}, LoopDevicePaths(16)...),
	Privileged:     true,
	Ports:          []int32{GD2ClientPort, GD2PeerPort},
	LivenessPath:   "/ping",
	Departures: []string{
		"glusterd2 is the container's command, not the image's systemd: systemd passes only five GD2_* variables " +
			"to glusterd2 (GD2_PEER_ID and every TLS setting would be dropped), cannot boot on cgroup-v2 nodes and " +
			"does not restart glusterd2; so /sys/fs/cgroup is not mounted",
		"--logfile=stdout: the log goes to the container log, so GCS's rsyslog sidecar and /var/log/glusterd2 mount are not needed",
		"no hostNetwork, as GCS; the state directory is a claim (or a host directory per node), not /var/lib/glusterd2 of the host",
		"brick claims appear at /dev/anthill/brick-<n>, a path no host has (sheet §6), instead of GCS's host /dev",
		"on LVM claims, /bin/sh activates the volume groups on the node's claims and makes their /dev/<vg>/<lv> nodes " +
			"(vgchange --activate y, vgmknodes) before it execs glusterd2: GD2 mounts the recorded /dev/<vg>/<lv> at start and " +
			"makes no nodes, and with udev off a restarted container's own /dev has none (GCS's host /dev kept them)",
		"GD2_RESTAUTH=true with a shared secret, where GCS ran without REST auth",
		"the pod shares its process namespace: glusterd2 reaps none of the daemons it starts, so the pause " +
			"process is PID 1 and reaps them, where GCS had systemd as PID 1",
		"storage.provisioner loop: Filesystem claims at /var/lib/anthill/devices/brick-<n> registered as GD2 loop " +
			"devices, and the host's /dev for the loop devices GD2 mounts brick images through (GCS used LVM only)",
	},
}

// EtcdContract is the etcd image's.
var EtcdContract = Contract{
	Component: "etcd",
	Source:    "container-contracts.md §2 (etcd@1293f5d4: Dockerfile-release.amd64; gcs@c3693f3: gcs-etcd-cluster.yml.j2)",
	Command:   []string{"/usr/local/bin/etcd"},
	Flags: []string{
		"--name", "--data-dir", "--listen-client-urls", "--advertise-client-urls", "--listen-peer-urls",
		"--initial-advertise-peer-urls", "--listen-metrics-urls", "--initial-cluster", "--initial-cluster-state",
		"--cert-file", "--key-file", "--trusted-ca-file", "--client-cert-auth",
		"--peer-cert-file", "--peer-key-file", "--peer-trusted-ca-file", "--peer-client-cert-auth",
		"--auto-compaction-mode", "--auto-compaction-retention", "--snapshot-count", "--quota-backend-bytes", "--max-request-bytes",
	},
	Required:       []string{"--data-dir", "--listen-client-urls", "--advertise-client-urls"},
	Env:            []string{"ETCD_*"},
	Mounts:         []string{etcdDataDir},
	OptionalMounts: []string{etcdTLSDir},
	Ports:          []int32{EtcdClientPort, EtcdPeerPort},
	Departures: []string{
		"one member from the etcd 3.5 release image in a StatefulSet, where GCS ran three 3.3.8 members through etcd-operator " +
			"(archived); GD2's clientv3 3.3 speaks to 3.5",
		"with a CA, client and peer ports require certificates of the cluster's CA; GCS ran etcd in plain HTTP",
	},
}

// CSIFileDriverName is the name the GD2-era file driver registers, fixed
// in its code.
const CSIFileDriverName = "org.gluster.glusterfs"

// CSIFileContract is the 2019 GD2-era file driver's.
var CSIFileContract = Contract{
	Component: "glusterfs-csi-driver",
	Source: "container-contracts.md §3 (csi@168a40e: cmd/glusterfs/main.go, pkg/glusterfs/driver.go, " +
		"pkg/glusterfs/Dockerfile, examples/kubernetes/glusterfs/csi-deployment.yaml; gcs@c3693f3: gcs-fs-csi.yml.j2)",
	Flags:    []string{"--nodeid", "--endpoint", "--resturl", "--username", "--restsecret", "--resttimeout", "--v"},
	Required: []string{"--nodeid", "--endpoint", "--resturl"},
	// SSL_CERT_FILE is read by Go's crypto/x509 on Linux, the driver's
	// only way to trust a CA (sheet §3): the trust bundle, with a CA.
	Env:            []string{"CSI_ENDPOINT", envSSLCertFile},
	Mounts:         []string{csiSocketDir},
	OptionalMounts: []string{csiCADir},
	DriverName:     CSIFileDriverName,
	Departures: []string{
		"the REST secret reaches the driver as an argument expanded from the cluster's auth Secret; GCS ran GD2 without REST auth",
		"the driver has no CA, insecure or client-certificate option: with a CA, SSL_CERT_FILE names the trust bundle, " +
			"which Go reads instead of the system roots; no client certificate (GD2 asks for none) (docs/security.md)",
	},
}

// CSINodePluginContract adds what the file driver's node plugin needs:
// privileges for FUSE mounts and kubelet's pod directory.
var CSINodePluginContract = Contract{
	Component:      "glusterfs-csi-driver node plugin",
	Source:         CSIFileContract.Source,
	Flags:          CSIFileContract.Flags,
	Required:       CSIFileContract.Required,
	Env:            CSIFileContract.Env,
	Mounts:         []string{csiSocketDir, kubeletPodsDir},
	OptionalMounts: CSIFileContract.OptionalMounts,
	Privileged:     true,
	Capabilities:   []corev1.Capability{"SYS_ADMIN"},
	DriverName:     CSIFileDriverName,
	Departures:     CSIFileContract.Departures,
}

// ProvisionerContract is external-provisioner v5.2.0's.
var ProvisionerContract = Contract{
	Component: "csi-provisioner",
	Source: "container-contracts.md §5 (external-provisioner@12a344a4: cmd/csi-provisioner/csi-provisioner.go, " +
		"deploy/kubernetes/rbac.yaml)",
	Flags: []string{
		"--csi-address", "--timeout", "--extra-create-metadata", "--leader-election", "--leader-election-namespace",
		"--strict-topology", "--immediate-topology", "--worker-threads", "--http-endpoint", "--v", "--feature-gates",
	},
	Required: []string{"--csi-address"},
	Mounts:   []string{csiSocketDir},
	Departures: []string{
		"a current provisioner beside the 2019 driver (CSI v1 both; the pairing is untested upstream), where GCS ran quay.io/k8scsi v1.0.1",
		"no --extra-create-metadata: the file driver names volumes by the request name and ignores the extra parameters",
	},
}

// RegistrarContract is node-driver-registrar v2.13.0's.
var RegistrarContract = Contract{
	Component: "csi-node-driver-registrar",
	Source:    "container-contracts.md §5 (node-driver-registrar@9b41324b: cmd/csi-node-driver-registrar/main.go)",
	Flags: []string{
		"--csi-address", "--kubelet-registration-path", "--plugin-registration-path", "--timeout", "--http-endpoint", "--v",
	},
	Required: []string{"--csi-address", "--kubelet-registration-path"},
	Mounts:   []string{csiSocketDir, "/registration"},
}

// SnapshotterContract is external-snapshotter v8.2.0's csi-snapshotter
// sidecar: it reads VolumeSnapshotContents of the driver's name and calls
// the driver's CreateSnapshot, DeleteSnapshot and ListSnapshots; it needs
// the snapshot.storage.k8s.io/v1 CRDs and the snapshot-controller, which
// it does not install. CSI spec 1.0.0 is its minimum (README), what the
// 2019 driver speaks.
var SnapshotterContract = Contract{
	Component: "csi-snapshotter",
	Source: "external-snapshotter@0f215370 (v8.2.0): cmd/csi-snapshotter/main.go, README.md (Compatibility), " +
		"deploy/kubernetes/csi-snapshotter/rbac-csi-snapshotter.yaml",
	Flags: []string{
		"--csi-address", "--timeout", "--kubeconfig", "--resync-period", "--snapshot-name-prefix", "--snapshot-name-uuid-length",
		"--worker-threads", "--extra-create-metadata", "--leader-election", "--leader-election-namespace",
		"--http-endpoint", "--metrics-path", "--retry-interval-start", "--retry-interval-max", "--node-deployment",
		"--feature-gates", "--v",
	},
	Required: []string{"--csi-address"},
	Mounts:   []string{csiSocketDir},
	Departures: []string{
		"v8.2.0 and the snapshot.storage.k8s.io/v1 API beside the 2019 driver, where GCS ran quay.io/k8scsi csi-snapshotter v1.0.1 " +
			"and the v1alpha1 API (CSI v1 both; the pairing is untested upstream)",
	},
}

// BlockTargetContract is what gluster-blockd would need: there is no image
// of it to run (it ships only inside the GD1 gluster/gluster-centos image
// and requires GD1's glusterd), so nothing may be built around it.
var BlockTargetContract = Contract{
	Component:  "gluster-blockd",
	Unbuilt:    true,
	Source:     "container-contracts.md §4 (gluster-block@ca7a44f: utils/utils.h, utils/utils.c, systemd/)",
	Departures: []string{"no image of its own exists; block volumes are refused at the API (spec.drivers)"},
}

// ContractOf is the contract of a container the builders make, by
// container name, and whether it is the node plugin's driver; nil for a
// container no contract covers.
func ContractOf(container string, nodePlugin bool) *Contract {
	switch container {
	case ContainerGD2:
		return &GD2Contract
	case ContainerGlusterExporter:
		return &GlusterExporterContract
	case containerEtcd:
		return &EtcdContract
	case containerCSIDriver:
		if nodePlugin {
			return &CSINodePluginContract
		}
		return &CSIFileContract
	case containerProvision:
		return &ProvisionerContract
	case containerRegistrar:
		return &RegistrarContract
	case containerSnapshotter:
		return &SnapshotterContract
	}
	return nil
}

// CSIFileParameters are the StorageClass parameters the file driver reads
// (csi@168a40e: pkg/glusterfs/controllerserver.go); it logs and ignores
// any other.
var CSIFileParameters = []string{ParameterReplicas, ParameterArbiterType, ParameterArbiterPath, ParameterBrickType}
