// Package gd2 is a context-first client for the glusterd2 REST API: JWT
// authentication, TLS, typed errors that keep the HTTP status and GD2's error
// list, and retries only where they are safe. It imports nothing from
// Kubernetes.
//
// # Errors
//
// Every non-2xx answer is an *APIError (status, operation, GD2's error
// items). Callers decide with errors.Is against the sentinels in errors.go;
// one answer may match several (a 409 lock timeout is ErrConflict and
// ErrLockBusy). The classes that matter most against a real GD2:
//
//   - ErrNodeDown: the liveness gate refused before changing anything. The
//     v1 engine (replace-brick, expand, volume option set and reset, heal
//     trigger) answers 500 "node <id> is probably down" and DownNode returns
//     that peer id; the v2 engine (volume create, start, stop, delete)
//     answers "probably some of the nodes are down" and names no node.
//     Deleting a dead peer is a different class, ErrPeerNotAlive.
//   - ErrTxnStepFailed: a v1 transaction step failed on some peer (500
//     code 2). TxnSteps lists step, peer and error of each failure. A step
//     that ran may have changed its node, so code-2 failures never match
//     the "refused, nothing changed" classes ErrNodeDown and ErrNoCapacity.
//   - ErrBrickPrepareFailed: a code-2 failure while validating, provisioning
//     or initialising the new brick of a replace-brick or expand, e.g.
//     StepReplaceBrickPrepareBricks with "size 0 of data subvolume is too
//     small" when the request reached a node that does not hold the source
//     brick. The target may keep a 0-byte brick or an LV.
//   - ErrInvalidOption: volume option set answers 500 code 2 from
//     StepVolOptionValidate ("validation failed for volume option: option
//     not found: <k>", "... is an advanced option ..."); volume create
//     answers the same texts as a 400 without the prefix.
//   - ErrNoCapacity: the planner found no room (replace-brick's "No volume
//     groups are available" and "peer id of new brick could not be parsed",
//     create's and expand's planner errors).
//   - Heal: ErrSelfHealDisabled (400 "self heal option is disabled for this
//     volume", also what a distribute volume gets on heal trigger),
//     ErrVolumeNotStarted, ErrUnsupportedVolumeType (heal-info "invalid
//     operation for this volume type").
//
// IsTransient separates what a plain retry may fix (lock contention,
// timeouts, gateway and network errors) from conditions that need action.
//
// # Talking to one node
//
// GD2 serves every call from whichever node receives it, but replace-brick
// sizes the new brick from the source brick's path on the serving node, so
// it must reach the node that holds the source brick. Options.DialAddress
// binds a client to one node's address (a pod IP) while the Host header,
// token and TLS server name stay those of Endpoint.
package gd2
