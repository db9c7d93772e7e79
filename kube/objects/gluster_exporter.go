package objects

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// Gluster's own exporter, gluster-exporter of gluster/gluster-prometheus,
// as the pinned GD2 image packages it (container-contracts.md §1: the
// nightly image installs gluster-prometheus-exporter from the project's
// 2019 master, default port 8080, and points its TOML at glusterd2). Under
// the image's systemd it ran as a service; with glusterd2 as the GD2
// container's command it runs in a container of its own, from the same
// image, in the same pod (spec.gluster.metricsExporter).
const (
	// ContainerGlusterExporter is the exporter's container.
	ContainerGlusterExporter = "gluster-exporter"
	// GlusterExporterPort is the port it serves /metrics on: its TOML
	// port key, 8080 in the 2019 sources and the image.
	GlusterExporterPort = 8080
	// PortNameGlusterMetrics names that port; the shipped PodMonitor
	// scrapes it.
	PortNameGlusterMetrics = "gluster-metrics"

	glusterExporterBinary    = "/usr/sbin/gluster-exporter"
	glusterExporterConfigDir = "/run/gluster-exporter"
	glusterExporterConfig    = glusterExporterConfigDir + "/gluster-exporter.toml"
	volumeExporterConfig     = "gluster-exporter-config"
	// envExporterSecret carries GD2's REST secret to the script that
	// writes the TOML: the exporter reads the secret from its TOML only.
	envExporterSecret = "EXPORTER_GD2_SECRET"
	// envExporterTLS is "true" when GD2 serves REST over TLS: the script
	// then names the cluster's CA in the TOML.
	envExporterTLS = "EXPORTER_GD2_TLS"
)

// glusterExporterCollectors are the collectors the exporter runs: it runs
// exactly those its TOML lists. Left out: gluster_brick, which statfs()s
// each local brick's path and runs lvs on it, and sees neither from a
// container of its own (GD2 mounts the bricks inside its container);
// anthill's brick capacity gauges come from GD2's REST API instead.
var glusterExporterCollectors = []string{
	"gluster_ps", "gluster_peer_counts", "gluster_peer_info", "gluster_brick_status",
	"gluster_volume_counts", "gluster_volume_status", "gluster_volume_heal", "gluster_volume_profile",
}

// glusterExporterScript writes the exporter's TOML, then runs it. The keys
// are conf.go's (gluster-prometheus@0d3c2f1: gluster-exporter/conf/conf.go):
// under [globals] the management daemon, GD2's state directory (where the
// exporter reads the local peer id, uuid.toml), the port and path, the log
// on stderr, the REST user and secret (Glusterd2User, Glusterd2Secret:
// fields without a TOML name, matched by their own) and, with TLS, the CA
// (Glusterd2Cacert); one [collectors.<name>] table per collector. GD2's
// endpoint comes from GD2_ENDPOINTS, which overrides the TOML's. The
// secret is written as a TOML literal string, so it may hold no single
// quote or line break.
var glusterExporterScript = func() string {
	var b strings.Builder
	b.WriteString("set -e\numask 077\nca=''\n")
	fmt.Fprintf(&b, "if [ \"${%s}\" = true ]; then ca=\"Glusterd2Cacert = '%s'\"; fi\n", envExporterTLS, gd2TLSDir+"/"+TLSCAKey)
	fmt.Fprintf(&b, "cat > %s <<EOF\n[globals]\n", glusterExporterConfig)
	b.WriteString("gluster-mgmt = 'glusterd2'\n")
	fmt.Fprintf(&b, "glusterd-dir = '%s'\n", GD2StateDir)
	fmt.Fprintf(&b, "port = %d\nmetrics-path = '/metrics'\n", GlusterExporterPort)
	b.WriteString("log-file = 'stderr'\nlog-level = 'info'\n")
	b.WriteString("cache-ttl-in-sec = 30\ncache-enabled-funcs = ['IsLeader', 'LocalPeerID', 'VolumeInfo']\n")
	fmt.Fprintf(&b, "Glusterd2User = '%s'\nGlusterd2Secret = '${%s}'\n${ca}\n", gd2.DefaultUser, envExporterSecret)
	for _, c := range glusterExporterCollectors {
		fmt.Fprintf(&b, "[collectors.%s]\nname = '%s'\nsync-interval = 15\ndisabled = false\n", c, c)
	}
	fmt.Fprintf(&b, "EOF\nexec %s --config=%s\n", glusterExporterBinary, glusterExporterConfig)
	return b.String()
}()

// GlusterExporterContract is the exporter's, run through the image's
// shell so that GD2's REST secret reaches its TOML.
var GlusterExporterContract = Contract{
	Component: "gluster-exporter",
	Source: "container-contracts.md §1 (glusterd2@54ce5f6f: extras/nightly-container/provision.yml; " +
		"gluster-prometheus@0d3c2f1: gluster-exporter/main.go, gluster-exporter/conf/conf.go, " +
		"scripts/gen-service.sh, extras/rpms/gluster-prometheus-exporter.spec, pkg/glusterutils/exporterd.go)",
	Command: []string{"/bin/sh", "-c", glusterExporterScript},
	// GD2_ENDPOINTS and GLUSTER_CLUSTER_ID are the exporter's (conf.go);
	// the other two are the script's.
	Env:            []string{"GD2_ENDPOINTS", "GLUSTER_CLUSTER_ID", envExporterSecret, envExporterTLS},
	Mounts:         []string{glusterExporterConfigDir, GD2StateDir},
	OptionalMounts: []string{gd2TLSDir},
	Ports:          []int32{GlusterExporterPort},
	Departures: []string{
		"a container of its own beside glusterd2, from the same image, where the image's systemd ran it as a service " +
			"with the packaged /etc/gluster-exporter/gluster-exporter.toml",
		"the image's shell writes the TOML at start: GD2's REST needs the cluster's secret, which the exporter reads from " +
			"its TOML only; GCS ran GD2 without REST auth",
		"no gluster_brick collector: it reads brick mounts and LVM from its own mount namespace, and GD2 mounts the bricks in its container",
	},
}

// MetricsExporterEnabled reports whether c runs gluster-exporter beside
// each GD2 (spec.gluster.metricsExporter).
func MetricsExporterEnabled(c *operatorv1alpha1.GlusterCluster) bool {
	return c.Spec.Gluster != nil && c.Spec.Gluster.MetricsExporter != nil && *c.Spec.Gluster.MetricsExporter && !IsExternal(c)
}

// glusterExporterContainer is the exporter's container in the pod of the
// server whose GD2 listens at host, and the volume its TOML is written to.
func glusterExporterContainer(c *operatorv1alpha1.GlusterCluster, image, host string) (corev1.Container, corev1.Volume) {
	secretName, secretKey := AuthSecretRef(c)
	scheme, tls := "http", "false"
	if TLSEnabled(c) {
		scheme, tls = "https", "true"
	}
	ctr := corev1.Container{
		Name:    ContainerGlusterExporter,
		Image:   image,
		Command: GlusterExporterContract.Command,
		Env: []corev1.EnvVar{
			// GD2 binds its REST port on the pod's DNS name only.
			{Name: "GD2_ENDPOINTS", Value: fmt.Sprintf("%s://%s:%d", scheme, host, GD2ClientPort)},
			// The exporter's cluster_id label: the cluster's namespace/name.
			{Name: "GLUSTER_CLUSTER_ID", Value: c.Namespace + "/" + c.Name},
			{Name: envExporterSecret, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: secretName}, Key: secretKey,
			}}},
			{Name: envExporterTLS, Value: tls},
		},
		Ports: []corev1.ContainerPort{tcpPort(PortNameGlusterMetrics, GlusterExporterPort)},
		VolumeMounts: []corev1.VolumeMount{
			{Name: volumeExporterConfig, MountPath: glusterExporterConfigDir},
			// uuid.toml: the exporter's local peer id, which makes one
			// server (the first online peer) report the volume figures.
			{Name: volumeState, MountPath: GD2StateDir, ReadOnly: true},
		},
	}
	if TLSEnabled(c) {
		ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: volumeTLS, MountPath: gd2TLSDir, ReadOnly: true})
	}
	vol := corev1.Volume{Name: volumeExporterConfig, VolumeSource: corev1.VolumeSource{
		EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory},
	}}
	return ctr, vol
}
