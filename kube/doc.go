// Package kube is where anthill meets Kubernetes. It holds no code of its
// own; its rooms are:
//
//   - apis: the CRD Go types (GlusterCluster, GlusterNode), and client: their
//     generated clientset, listers and informers;
//   - engine: the dispatcher, the one sync runner every machine runs on,
//     the status writer, the transition log, metrics and error classes;
//   - objects: names, labels, annotations and object builders, the checks
//     that a live object is what its builder builds, and the conversion of
//     API objects into the facts package states decides over; no API calls;
//   - effects: the implementations of the transitions' ops interfaces
//     (effects.Kube, effects.GD2, effects.NoGD2), the GD2 clients, and the
//     other live reads and writes of the world outside the informers;
//   - machines: one spec per machine (where its cursor lives, what it
//     gathers, its entry effects and status writer), the informer event
//     to key mapping, and Wire, which builds the informers, listers and
//     specs and registers them with the dispatcher;
//   - operator: the process (Run, Config, leader election, the HTTP server
//     for /metrics, /healthz and /readyz, NewLogger).
//
// internal/fixtures holds the test fixtures the rooms' tests share.
//
// Each room imports only the rooms before it: engine ← objects ← effects
// ← machines ← operator (apis and client are below them all).
package kube
