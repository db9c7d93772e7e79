package gd2

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
)

// ErrorItem is one entry of GD2's error envelope
// {"errors":[{"code":..,"message":..,"fields":{..}}]}.
type ErrorItem struct {
	Code    int               `json:"code"`
	Message string            `json:"message"`
	Fields  map[string]string `json:"fields,omitempty"`
}

// GD2 error codes. Code 2 is emitted only by the v1 transaction engine
// (expand, replace-brick, heal trigger, volume option set and reset), one
// item per failing peer, always with HTTP 500. Peer edit and rebalance stop
// mask their transaction errors as code 1.
const (
	CodeGeneric       = 1
	CodeTxnStepFailed = 2
)

// PeerID is the peer on which a failed transaction step ran (code 2 only).
func (e ErrorItem) PeerID() string { return e.Fields["peer-id"] }

// Step is the name of the failed transaction step, e.g. vol-expand.InitBricks
// (code 2 only).
func (e ErrorItem) Step() string { return e.Fields["step"] }

// StepError is the error text the failed step reported (code 2 only).
func (e ErrorItem) StepError() string { return e.Fields["error"] }

// APIError is every non-2xx answer from GD2. GD2's own client throws the
// status away; we keep it because the operator decides on it (a 404 means
// "already gone", a 409 "try again", a 403 "peer still has bricks").
type APIError struct {
	Status int       // HTTP status code
	Op     Operation // which client call failed
	Method string
	Path   string // request path without query, e.g. /v1/volumes/vol1
	Errors []ErrorItem
	// Body holds the start of a body that was not a GD2 error envelope, such
	// as the router's plain-text "404 page not found"; empty otherwise.
	Body string
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "gd2 %s (%s %s): HTTP %d", e.Op, e.Method, e.Path, e.Status)
	if len(e.Errors) == 0 {
		if e.Body != "" {
			fmt.Fprintf(&b, ": %s", e.Body)
		}
		return b.String()
	}
	for i, it := range e.Errors {
		sep := "; "
		if i == 0 {
			sep = ": "
		}
		b.WriteString(sep)
		if it.Code == CodeTxnStepFailed {
			fmt.Fprintf(&b, "txn step %s failed on peer %s: %s", it.Step(), it.PeerID(), it.StepError())
			continue
		}
		b.WriteString(it.Message)
	}
	return b.String()
}

// TxnStepFailures returns the code-2 items, one per peer whose step failed.
func (e *APIError) TxnStepFailures() []ErrorItem {
	var out []ErrorItem
	for _, it := range e.Errors {
		if it.Code == CodeTxnStepFailed {
			out = append(out, it)
		}
	}
	return out
}

// Sentinels for errors.Is. An *APIError may match several: a 409 lock
// timeout is both ErrConflict and ErrLockBusy. GD2 distinguishes many
// conditions only by message text, so the finer sentinels match on the
// (case-insensitive) messages listed in the GD2 fact sheet.
var (
	ErrBadRequest   = errors.New("gd2: bad request")  // any 400
	ErrUnauthorized = errors.New("gd2: unauthorized") // 401: missing/invalid token
	ErrNotFound     = errors.New("gd2: not found")    // 404, and GD2's 500s for missing volume/device
	ErrConflict     = errors.New("gd2: conflict")     // any 409
	// ErrLockBusy is GD2's 409 "could not obtain lock": it refused before
	// doing anything, so any call may be repeated.
	ErrLockBusy      = errors.New("gd2: lock busy")
	ErrAlreadyExists = errors.New("gd2: already exists") // peer (409), volume or device (400)
	ErrHasSnapshots  = errors.New("gd2: volume has snapshots")
	ErrPeerNotAlive  = errors.New("gd2: peer is not alive") // peer delete on a dead peer (500)
	// ErrNodeDown is the liveness gate of GD2's transaction engines: a node
	// the transaction needs is down, and GD2 refused before changing
	// anything. The v1 engine (replace-brick, expand, volume options, heal
	// trigger) names the node: see DownNode. The v2 engine (volume create,
	// start, stop, delete) does not. A code-2 step failure never matches.
	ErrNodeDown      = errors.New("gd2: a node is probably down")
	ErrPeerHasBricks = errors.New("gd2: peer has bricks") // peer delete (403)
	ErrRemovingSelf  = errors.New("gd2: removing the serving peer is disallowed")
	ErrTxnStepFailed = errors.New("gd2: transaction step failed") // code 2; see TxnSteps
	// ErrBrickPrepareFailed is a code-2 failure in a step that validates,
	// provisions or initialises the new bricks of a replace-brick or expand
	// on their node (StepReplaceBrickPrepareBricks, StepVolCreateInitBricks,
	// StepVolExpandValidateBricks, StepVolExpandInitBricks). The stored
	// volume is unchanged, but the target node may keep debris:
	// replace-brick leaves the new LV or a 0-byte brick image behind.
	// Typical causes: a replace-brick served by a node that does not hold
	// the source brick (the new brick is sized 0), an LV name clash on the
	// target device, a brick path in use.
	ErrBrickPrepareFailed = errors.New("gd2: preparing a new brick failed")
	ErrTxnTimeout         = errors.New("gd2: transaction timed out")
	// ErrHealNotDelivered is a heal trigger every one of whose code-2
	// failures is at StepSelfHealHeal: GD2 passed its liveness gate but
	// could not hand the trigger to the self-heal daemon of those nodes.
	// Nothing was refused and nothing is lost: the daemons keep crawling
	// on their own, so the heal goes on without the trigger.
	ErrHealNotDelivered = errors.New("gd2: heal trigger not delivered to the self-heal daemon")
	// Volume state machine refusals (400).
	ErrVolumeNotStarted     = errors.New("gd2: volume not started")
	ErrVolumeAlreadyStarted = errors.New("gd2: volume already started")
	ErrVolumeAlreadyStopped = errors.New("gd2: volume already stopped")
	ErrVolumeNotStopped     = errors.New("gd2: volume must be stopped")
	// ErrUnsupportedVolumeType: heal on a non-replicated volume, rebalance on
	// a single-subvolume volume.
	ErrUnsupportedVolumeType = errors.New("gd2: operation not supported for the volume type")
	ErrSelfHealDisabled      = errors.New("gd2: self-heal daemon disabled for the volume")
	// ErrNoCapacity: the brick planner found no device with room (smart
	// create, in-place expand, replace-brick), refused before changing
	// anything. A code-2 failure never matches, even when lvcreate reports
	// "insufficient free space": it ran on the target and may have left
	// debris (see ErrBrickPrepareFailed).
	ErrNoCapacity          = errors.New("gd2: no capacity")
	ErrRebalanceNotStarted = errors.New("gd2: rebalance not started")
	// ErrInvalidOption: an unknown option, or one whose advanced,
	// experimental or deprecated flag the request did not pass, or a bad
	// value. Volume option set answers 500 code 2 (step vol-option.Validate,
	// error "validation failed for volume option: ..."); volume create the
	// same texts as a 400 without the prefix; cluster options 500 "Invalid
	// global option".
	ErrInvalidOption = errors.New("gd2: invalid option")

	// ErrNoResponse: no HTTP response arrived (dial failure, reset, timeout).
	// For a mutating call the outcome is unknown; re-read state before
	// deciding to repeat it.
	ErrNoResponse = errors.New("gd2: no response")
	// ErrBadResponse is a 2xx whose body the client could not decode.
	ErrBadResponse = errors.New("gd2: undecodable response")
	// ErrRefreshFailed: a mutating call succeeded but the follow-up GET that
	// fetches the fresh object failed (see ReplaceBrick). Do not repeat the
	// mutation; re-read state instead.
	ErrRefreshFailed = errors.New("gd2: call succeeded but re-reading the result failed")
)

// classifiers maps each sentinel to the predicate that decides whether an
// APIError is an instance of it.
var classifiers = map[error]func(*APIError) bool{
	ErrBadRequest:   func(e *APIError) bool { return e.Status == http.StatusBadRequest },
	ErrUnauthorized: func(e *APIError) bool { return e.Status == http.StatusUnauthorized },
	ErrNotFound: func(e *APIError) bool {
		return e.Status == http.StatusNotFound ||
			(e.Status >= 500 && e.hasMessage("volume not found", "peer not found", "device does not exist"))
	},
	ErrConflict: func(e *APIError) bool { return e.Status == http.StatusConflict },
	ErrLockBusy: func(e *APIError) bool {
		return e.Status == http.StatusConflict && e.hasMessage("could not obtain lock")
	},
	// A step that failed because something it creates already exists (an
	// LV name clash) is not "what you asked for exists".
	ErrAlreadyExists: func(e *APIError) bool { return e.hasRefusal("already exists", "exists with given addresses") },
	ErrHasSnapshots:  func(e *APIError) bool { return e.Status == http.StatusFailedDependency },
	ErrPeerNotAlive:  func(e *APIError) bool { return e.hasMessage("peer is not alive") },
	ErrNodeDown:      func(e *APIError) bool { return e.hasRefusal("is probably down", "nodes are down") },
	ErrPeerHasBricks: func(e *APIError) bool {
		return e.Status == http.StatusForbidden || e.hasMessage("peer has bricks")
	},
	ErrRemovingSelf:  func(e *APIError) bool { return e.hasMessage("removing self is disallowed") },
	ErrTxnStepFailed: func(e *APIError) bool { return len(e.TxnStepFailures()) > 0 },
	ErrBrickPrepareFailed: func(e *APIError) bool {
		for _, it := range e.TxnStepFailures() {
			if isBrickPrepareStep(it.Step()) {
				return true
			}
		}
		return false
	},
	ErrTxnTimeout: func(e *APIError) bool { return e.hasMessage("txn timeout") },
	ErrHealNotDelivered: func(e *APIError) bool {
		steps := e.TxnStepFailures()
		for _, it := range steps {
			if it.Step() != StepSelfHealHeal {
				return false
			}
		}
		return len(steps) > 0 && len(steps) == len(e.Errors)
	},

	ErrVolumeNotStarted:     func(e *APIError) bool { return e.hasMessage("volume not started") },
	ErrVolumeAlreadyStarted: func(e *APIError) bool { return e.hasMessage("volume already started") },
	ErrVolumeAlreadyStopped: func(e *APIError) bool { return e.hasMessage("volume already stopped") },
	ErrVolumeNotStopped:     func(e *APIError) bool { return e.hasMessage("must be in stopped state") },
	ErrUnsupportedVolumeType: func(e *APIError) bool {
		return e.hasMessage("invalid operation for this volume type", "not a distribute volume")
	},
	ErrSelfHealDisabled: func(e *APIError) bool { return e.hasMessage("self heal option is disabled") },
	ErrNoCapacity: func(e *APIError) bool {
		return e.hasRefusal("no space available", "no devices registered", "space not sufficient",
			"no volume groups are available", "new brick could not be parsed", "insufficient free space")
	},
	ErrRebalanceNotStarted: func(e *APIError) bool { return e.hasMessage("rebalance not started") },
	ErrInvalidOption: func(e *APIError) bool {
		for _, it := range e.TxnStepFailures() {
			if it.Step() == StepVolOptionValidate || containsFold(it.StepError(), optionErrorTexts...) {
				return true
			}
		}
		return e.hasRefusal(optionErrorTexts...)
	},
}

// optionErrorTexts are GD2's option validation messages (lower case), as
// volume create sends them and option set wraps them ("validation failed
// for volume option: <text>"): an unknown key, a missing advanced,
// experimental or deprecated flag ("... To set it pass the <level> flag"),
// a bad value. Cluster options say "Invalid global option".
var optionErrorTexts = []string{
	"validation failed for volume option", "option not found", "to set it pass the",
	"failed to validate value(", "invalid global option", "invalid option",
}

// Is lets errors.Is match an *APIError against the sentinels above.
func (e *APIError) Is(target error) bool {
	match, ok := classifiers[target]
	return ok && match(e)
}

// hasMessage reports whether any error message (or the raw body, or a code-2
// item's step error) contains one of the needles, ignoring case.
func (e *APIError) hasMessage(needles ...string) bool {
	for _, it := range e.Errors {
		if containsFold(it.Message, needles...) || containsFold(it.StepError(), needles...) {
			return true
		}
	}
	return containsFold(e.Body, needles...)
}

// hasRefusal is hasMessage without code-2 items: it matches GD2's refusals
// before a transaction ran, never a step that ran on some node and may have
// changed it.
func (e *APIError) hasRefusal(needles ...string) bool {
	for _, it := range e.Errors {
		if it.Code != CodeTxnStepFailed && containsFold(it.Message, needles...) {
			return true
		}
	}
	return containsFold(e.Body, needles...)
}

// containsFold reports whether text contains one of the lower-case needles,
// ignoring case.
func containsFold(text string, needles ...string) bool {
	text = strings.ToLower(text)
	for _, n := range needles {
		if strings.Contains(text, n) {
			return true
		}
	}
	return false
}

// downNodeRE is the v1 engine's liveness refusal, "node <id> is probably
// down".
var downNodeRE = regexp.MustCompile(`(?i)\bnode\s+(\S+)\s+is probably down`)

// DownNode returns the peer id of the node whose liveness check failed,
// from GD2's v1 refusal "node <id> is probably down" (replace-brick, expand,
// volume options, heal trigger). ok is false when err is not such a refusal,
// including the v2 engine's "probably some of the nodes are down", which
// names no node; errors.Is(err, ErrNodeDown) tests the class.
func DownNode(err error) (peerID string, ok bool) {
	var e *APIError
	if !errors.As(err, &e) {
		return "", false
	}
	for _, it := range e.Errors {
		if it.Code == CodeTxnStepFailed {
			continue
		}
		if m := downNodeRE.FindStringSubmatch(it.Message); m != nil {
			return m[1], true
		}
	}
	return "", false
}

// IsTransient reports whether repeating the identical call later may
// succeed without anyone changing anything: lock contention, transaction
// timeouts, gateway errors and network failures or timeouts. Conditions of
// the cluster that need action (a dead peer, a peer with bricks, a code-2
// step failure) are not transient; test for their sentinels instead. A
// caller's own cancellation is never transient.
func IsTransient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		switch apiErr.Status {
		case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return true
		}
		return errors.Is(apiErr, ErrLockBusy) || errors.Is(apiErr, ErrTxnTimeout)
	}
	if errors.Is(err, ErrBadResponse) || errors.Is(err, ErrRefreshFailed) {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, ErrNoResponse)
}
