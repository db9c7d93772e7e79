package main

import operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"

// Console hints (x-descriptors) a console such as OpenShift's uses to
// render a form and a status panel for each kind.
const (
	xText    = "urn:alm:descriptor:com.tectonic.ui:text"
	xNumber  = "urn:alm:descriptor:com.tectonic.ui:number"
	xBoolean = "urn:alm:descriptor:com.tectonic.ui:booleanSwitch"
	xSecret  = "urn:alm:descriptor:io.kubernetes:Secret"
	xClass   = "urn:alm:descriptor:io.kubernetes:StorageClass"
	xPhase   = "urn:alm:descriptor:io.kubernetes.phase"
	xConds   = "urn:alm:descriptor:io.kubernetes.conditions"
	xSelect  = "urn:alm:descriptor:com.tectonic.ui:select:"
	xAdvance = "urn:alm:descriptor:com.tectonic.ui:advanced"
)

func spec(path, name, desc string, x ...string) operatorsv1alpha1.SpecDescriptor {
	return operatorsv1alpha1.SpecDescriptor{Path: path, DisplayName: name, Description: desc, XDescriptors: x}
}

func status(path, name, desc string, x ...string) operatorsv1alpha1.StatusDescriptor {
	return operatorsv1alpha1.StatusDescriptor{Path: path, DisplayName: name, Description: desc, XDescriptors: x}
}

// descriptors are the spec and status fields shown per kind; every path
// must name a field of the CRD's schema (e2e/olm checks).
var descriptors = map[string]struct {
	spec   []operatorsv1alpha1.SpecDescriptor
	status []operatorsv1alpha1.StatusDescriptor
}{
	"GlusterCluster": {
		spec: []operatorsv1alpha1.SpecDescriptor{
			spec("mode", "Mode", "manual: node counts per template; automatic: sized on free capacity; external: GD2 run outside Kubernetes.",
				xSelect+"manual", xSelect+"automatic", xSelect+"external"),
			spec("nodeTemplates[0].name", "Template name", "Name of a node template.", xText),
			spec("nodeTemplates[0].zone", "Zone", "Failure domain of the template's nodes.", xText),
			spec("nodeTemplates[0].nodes", "Nodes", "Number of Gluster servers of the template (manual mode).", xNumber),
			spec("nodeTemplates[0].storage.capacity", "Capacity per device", "Size of each device claim.", xText),
			spec("nodeTemplates[0].storage.deviceCount", "Devices per node", "Number of device claims per node.", xNumber),
			spec("nodeTemplates[0].storage.storageClassName", "Storage class", "StorageClass of the device claims.", xClass),
			spec("gluster.version", "Gluster version", "Version of the Gluster servers; changing it starts a heal-gated upgrade.", xText),
			spec("gluster.image", "Gluster image", "Image of the Gluster servers, without tag.", xText, xAdvance),
			spec("drivers", "CSI drivers", "The CSI drivers to deploy: file, block."),
			spec("caSecretRef.name", "TLS CA secret", "Secret holding the CA that issues GD2, etcd and client certificates.", xSecret),
			spec("failurePolicy.permissibleDowntime", "Permissible downtime", "How long a server may be down before it is Failed.", xText, xAdvance),
			spec("upgradePolicy.healTimeout", "Heal timeout", "How long an upgrade step may wait for heal before it is Blocked.", xText, xAdvance),
			spec("paused", "Paused", "Stops every change to the cluster's nodes.", xBoolean),
		},
		status: []operatorsv1alpha1.StatusDescriptor{
			status("phase", "Phase", "The cluster machine's state.", xPhase),
			status("conditions", "Conditions", "Ready, Progressing, Degraded, Upgrading.", xConds),
			status("nodes.online", "Online nodes", "GlusterNodes in state Online.", xText),
			status("nodes.total", "Nodes", "GlusterNodes of the cluster.", xText),
			status("upgrade.state", "Upgrade", "The upgrade machine's state.", xText),
		},
	},
	"GlusterNode": {
		spec: []operatorsv1alpha1.SpecDescriptor{
			spec("cluster", "Cluster", "The GlusterCluster the node belongs to.", xText),
			spec("zone", "Zone", "The node's failure domain.", xText),
		},
		status: []operatorsv1alpha1.StatusDescriptor{
			status("state", "State", "The node machine's state.", xPhase),
			status("conditions", "Conditions", "The node's conditions.", xConds),
			status("version", "Version", "The Gluster version the node runs.", xText),
		},
	},
}
