package states

import "slices"

// NextBatch picks the next nodes to upgrade together from candidates (in
// upgrade order, see NodeTally.Candidates): the first maxParallel of them
// (at least one), and with perZone only those in the first candidate's
// zone, so that a batch never stops two zones at once.
func NextBatch(candidates []NodeFacts, maxParallel int, perZone bool) []string {
	if len(candidates) == 0 {
		return nil
	}
	size, zone := max(1, maxParallel), candidates[0].Zone
	var out []string
	for _, n := range candidates {
		if len(out) == size {
			break
		}
		if perZone && n.Zone != zone {
			continue
		}
		out = append(out, n.Name)
	}
	return out
}

// UpgradeBatch is the batch the upgrade machine selects: a batch already
// selected (current, from status) keeps its turn, after a crash or after
// its nodes went back to Online because the run was paused, as far as its
// nodes are still candidates; otherwise NextBatch. Either way the names
// come in candidate order.
func UpgradeBatch(candidates []NodeFacts, current []string, maxParallel int, perZone bool) []string {
	var kept []string
	for _, n := range candidates {
		if slices.Contains(current, n.Name) {
			kept = append(kept, n.Name)
		}
	}
	if len(kept) > 0 {
		return kept
	}
	return NextBatch(candidates, maxParallel, perZone)
}
