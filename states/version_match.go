package states

import (
	"fmt"
	"strings"
)

// The reasons of a GlusterNode's VersionMatches condition.
const (
	ReasonVersionMatches     = "VersionMatches"
	ReasonVersionMismatch    = "VersionMismatch"
	ReasonVersionNotRead     = "VersionNotRead"
	ReasonVersionNotReported = "VersionNotReported"
	ReasonVersionUnparsable  = "VersionUnparsable"
	ReasonNoVersionRecorded  = "NoVersionRecorded"
)

// VersionMatch is the three-valued answer of DecideVersionMatch, as a
// condition's status says it.
type VersionMatch string

// VersionMatch values.
const (
	VersionMatchTrue    VersionMatch = "True"
	VersionMatchFalse   VersionMatch = "False"
	VersionMatchUnknown VersionMatch = "Unknown"
)

// VersionFacts are what DecideVersionMatch compares for one server.
type VersionFacts struct {
	// Recorded is the version anthill records for the server (its
	// status.version: the version its ready pod was started at); "" when
	// the cluster names none.
	Recorded string
	// Read says whether GD2's /version was read on the server at all.
	Read bool
	// Reported is glusterd-version as GD2 sent it ("" when its binary was
	// built without one).
	Reported string
}

// VersionVerdict is the VersionMatches condition DecideVersionMatch asks
// for.
type VersionVerdict struct {
	Status  VersionMatch
	Reason  string
	Message string
}

// ParseGD2Version reads the release in a glusterd-version string. GD2's
// build (scripts/pkg-version --full) writes v<release>-<build>: v4.1.0-0
// for a build of the tag v4.1.0, v4.1.0-12.git3b7aa8b for one twelve
// commits past it. The release is what is compared; a build past a tag
// counts as that tag's release.
func ParseGD2Version(s string) (Version, error) {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "v") {
		return Version{}, fmt.Errorf("GD2 version %q: want v<release>-<build>", s)
	}
	release, _, _ := strings.Cut(t, "-")
	return ParseVersion(release)
}

// DecideVersionMatch says whether the version a server's GD2 reports is the
// version anthill records for it, so that a label that does not describe
// what runs (a version changed over an image that ignores it) is a
// condition, not a silence.
func DecideVersionMatch(f VersionFacts) VersionVerdict {
	unknown := func(reason, msg string) VersionVerdict {
		return VersionVerdict{Status: VersionMatchUnknown, Reason: reason, Message: msg}
	}
	switch {
	case !f.Read:
		return unknown(ReasonVersionNotRead, "GD2's /version has not been read on this server yet: it is read once its pod is ready.")
	case strings.TrimSpace(f.Reported) == "":
		return unknown(ReasonVersionNotReported, "GD2 reports no version: its binary was built without one, so what the server runs cannot be told.")
	}
	reported, err := ParseGD2Version(f.Reported)
	if err != nil {
		return unknown(ReasonVersionUnparsable, fmt.Sprintf("GD2 reports version %q, which is not v<release>-<build>: it cannot be compared.", f.Reported))
	}
	if f.Recorded == "" {
		return unknown(ReasonNoVersionRecorded, fmt.Sprintf("GD2 reports %s; anthill records no version for this server (spec.gluster.version is unset), so there is nothing to compare.", f.Reported))
	}
	recorded, err := ParseVersion(f.Recorded)
	if err != nil {
		return unknown(ReasonVersionUnparsable, fmt.Sprintf("anthill records version %q for this server, which is not a version: it cannot be compared.", f.Recorded))
	}
	if reported.Compare(recorded) == 0 {
		return VersionVerdict{Status: VersionMatchTrue, Reason: ReasonVersionMatches,
			Message: fmt.Sprintf("GD2 reports %s, release %s, the version anthill records for this server.", f.Reported, recorded)}
	}
	return VersionVerdict{Status: VersionMatchFalse, Reason: ReasonVersionMismatch, Message: fmt.Sprintf(
		"GD2 reports %s, release %s, but anthill records %s for this server: its image runs another build than spec.gluster.version says. "+
			"With the default pinned image every version runs the same nightly build; to run %s, name an image built for it in spec.gluster.image (docs/upgrades.md).",
		f.Reported, reported, f.Recorded, f.Recorded)}
}
