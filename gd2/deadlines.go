package gd2

import (
	"context"
	"net/http"
	"time"
)

// Each call's patience, sized to the call, so that a GD2 that hangs on one
// request costs the caller little (issue 52: under the chaos profile a
// hung request held its sync for the whole 30 s timeout, and the upgrade,
// which steps one node at a time, stalled behind each).
//
//   - A read that has not answered after hedgeAfter is sent again beside
//     the first, and the first answer wins: a read changes nothing, so two
//     of them are safe, and GD2 answers its reads in well under a second
//     (NOTES.md's real timings), so one this late is far more likely hung
//     than slow. The slow reads (heal-info runs glfsheal per brick,
//     volume status mounts the volume) wait longer first.
//   - A mutation's attempt is bounded by attemptTimeout: GD2's
//     transactions across peers (create, start, stop, delete, expand,
//     replace-brick, peer add and delete, device add, rebalance) keep the
//     client's whole timeout; an edit of one object's fields or options
//     gets quickMutation. A mutation that times out is never repeated
//     blindly (retryable): the caller re-reads and decides.

const (
	// hedgeRead is how long a read waits before it is hedged.
	hedgeRead = 2 * time.Second
	// hedgeSlowRead is hedgeRead for the reads GD2 does real work for.
	hedgeSlowRead = 5 * time.Second
	// quickMutation bounds an attempt of an edit of one object.
	quickMutation = 10 * time.Second
)

// hedgeAfter is how long a GET of op waits for its answer before the same
// GET is sent beside it.
func hedgeAfter(op Operation) time.Duration {
	switch op {
	case OpHealInfo, OpHealSplitBrain, OpVolumesStatus, OpVolumesBricksStatus, OpRebalanceStatus:
		return hedgeSlowRead
	}
	return hedgeRead
}

// attemptTimeout bounds one attempt of a call of op with method: the
// client's timeout, or less for an edit of one object (never more).
func (c *Client) attemptTimeout(method string, op Operation) time.Duration {
	if method == http.MethodGet {
		return c.timeout
	}
	switch op {
	case OpPeersEdit, OpVolumesEdit, OpVolumesOptionsSet, OpVolumesOptionsReset, OpDevicesEdit,
		OpClusterOptionsSet, OpHealTrigger:
		return min(quickMutation, c.timeout)
	}
	return c.timeout
}

// exchangeResult is one exchange's answer body or error.
type exchangeResult struct {
	data []byte
	err  error
}

// hedged runs a GET exchange, and a second one beside it if the first has
// not answered after hedge; it returns the first success, or, when both
// failed, the last error. The loser is cancelled.
func (c *Client) hedged(ctx context.Context, req request, hedge time.Duration) ([]byte, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make(chan exchangeResult, 2)
	send := func() {
		go func() {
			data, err := c.exchange(ctx, req, nil)
			results <- exchangeResult{data, err}
		}()
	}
	send()
	inFlight, hedges := 1, 0
	timer := time.NewTimer(hedge)
	defer timer.Stop()
	for {
		select {
		case r := <-results:
			inFlight--
			if r.err == nil || inFlight == 0 {
				return r.data, r.err
			}
		case <-timer.C:
			if hedges == 0 && inFlight == 1 {
				hedges++
				inFlight++
				if ho, ok := c.observer.(HedgeObserver); ok {
					ho.ObserveHedge(req.op)
				}
				send()
			}
		}
	}
}

// HedgeObserver is an Observer that also counts the reads sent a second
// time because the first had not answered (the operator's metrics).
type HedgeObserver interface {
	ObserveHedge(op Operation)
}
