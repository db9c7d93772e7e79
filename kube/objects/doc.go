// Package objects is what anthill knows of the Kubernetes objects it owns
// without calling the API server: their names, labels and annotations; the
// builders of the StatefulSets, Services, Secrets, CSI objects, disruption
// budgets and EndpointSlices it creates; the checks whether a live object
// still is what its builder builds; and the conversion of GlusterNodes and
// node templates into the fact structs package states decides over.
//
// It imports no other room of kube but the generated API types: effects,
// machines and operator build on it.
package objects
