package gd2

import "errors"

// Names of GD2 v1 transaction steps that the operator tells apart. A code-2
// error item carries the name of the step that failed in fields.step.
const (
	// StepReplaceBrickPrepareBricks provisions the new brick of a
	// replace-brick (LV, mkfs, mount) on the target node. It fails when the
	// request was served by a node that does not hold the source brick (size
	// 0: "size 0 of data subvolume is too small") or when the target's
	// volume group already holds an LV of the new brick's name.
	StepReplaceBrickPrepareBricks = "brick-replace.PrepareBricks"
	// StepVolCreateInitBricks initialises brick directories (xattrs); the
	// replace-brick transaction runs it for the new brick.
	StepVolCreateInitBricks = "vol-create.InitBricks"
	// StepVolExpandValidateBricks and StepVolExpandInitBricks check and
	// initialise the added bricks of an expand on their nodes.
	StepVolExpandValidateBricks = "vol-expand.ValidateBricks"
	StepVolExpandInitBricks     = "vol-expand.InitBricks"
	// StepVolOptionValidate validates a volume option set; its failures are
	// ErrInvalidOption.
	StepVolOptionValidate = "vol-option.Validate"
	// StepSelfHealHeal is the heal trigger's one step, run on every node
	// holding a brick of the volume: it asks that node's self-heal daemon
	// to crawl. It fails when the brick-op RPC to the daemon fails; the
	// daemon itself goes on with its periodic crawl.
	StepSelfHealHeal = "selfheal.Heal"
)

// brickPrepareSteps are the steps whose code-2 failure is
// ErrBrickPrepareFailed: they run on the new bricks' nodes before GD2
// stores the changed volume.
var brickPrepareSteps = []string{
	StepReplaceBrickPrepareBricks, StepVolCreateInitBricks,
	StepVolExpandValidateBricks, StepVolExpandInitBricks,
}

func isBrickPrepareStep(step string) bool {
	for _, s := range brickPrepareSteps {
		if s == step {
			return true
		}
	}
	return false
}

// TxnStep is one failed step of a v1 transaction: a code-2 error item,
// reported once per peer on which the step failed.
type TxnStep struct {
	PeerID string // peer the step ran on (fields.peer-id)
	Step   string // step name, e.g. brick-replace.PrepareBricks (fields.step)
	Error  string // the step's own error text (fields.error)
}

// TxnSteps returns the failed transaction steps of err, in GD2's order; nil
// when err is not a code-2 failure.
func TxnSteps(err error) []TxnStep {
	var e *APIError
	if !errors.As(err, &e) {
		return nil
	}
	var out []TxnStep
	for _, it := range e.TxnStepFailures() {
		out = append(out, TxnStep{PeerID: it.PeerID(), Step: it.Step(), Error: it.StepError()})
	}
	return out
}
