package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/blang/semver/v4"
)

// upgradeGraph is where the bundle of version sits in OLM's upgrade graph:
// replaces names the CSV of the newest release before it, from
// CHANGELOG.md's "## vX.Y.Z — date, commit ..." headings (an unreleased
// heading is skipped), and skipRange lets every older version, including
// one that was never in this catalog's channel, upgrade to it in one step.
// The first release replaces nothing.
func upgradeGraph(changelog string, version semver.Version) (replaces, skipRange string, err error) {
	f, err := os.Open(changelog)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	var prev *semver.Version
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		heading, ok := strings.CutPrefix(sc.Text(), "## v")
		if !ok {
			continue
		}
		field, _, _ := strings.Cut(heading, " ")
		v, err := semver.Parse(field)
		if err != nil || !v.LT(version) {
			continue
		}
		if prev == nil || v.GT(*prev) {
			prev = &v
		}
	}
	if err := sc.Err(); err != nil {
		return "", "", fmt.Errorf("%s: %w", changelog, err)
	}
	skipRange = "<" + version.String()
	if prev == nil {
		return "", skipRange, nil
	}
	return packageName + ".v" + prev.String(), skipRange, nil
}
