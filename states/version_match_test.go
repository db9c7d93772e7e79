package states

import "testing"

func TestDecideVersionMatch(t *testing.T) {
	for _, tc := range []struct {
		name   string
		facts  VersionFacts
		status VersionMatch
		reason string
	}{
		{"not read yet, nothing is said", VersionFacts{Recorded: "4.1.0"}, VersionMatchUnknown, ReasonVersionNotRead},
		{"a GD2 built without a version cannot be told apart", VersionFacts{Recorded: "4.1.0", Read: true}, VersionMatchUnknown, ReasonVersionNotReported},
		{"a version string not of GD2's form is not guessed at", VersionFacts{Recorded: "4.1.0", Read: true, Reported: "nightly"}, VersionMatchUnknown, ReasonVersionUnparsable},
		{"a release part that is not a number is not guessed at", VersionFacts{Recorded: "4.1.0", Read: true, Reported: "vX.1-0"}, VersionMatchUnknown, ReasonVersionUnparsable},
		{"without a recorded version there is nothing to compare", VersionFacts{Read: true, Reported: "v4.1.0-0"}, VersionMatchUnknown, ReasonNoVersionRecorded},
		{"a build of the recorded release's tag matches", VersionFacts{Recorded: "4.1.0", Read: true, Reported: "v4.1.0-0"}, VersionMatchTrue, ReasonVersionMatches},
		{"a recorded version written short and with a v matches the same release", VersionFacts{Recorded: "v4.1", Read: true, Reported: "v4.1.0-0"}, VersionMatchTrue, ReasonVersionMatches},
		{"a build past the tag counts as the tag's release", VersionFacts{Recorded: "4.1.0", Read: true, Reported: "v4.1.0-12.git3b7aa8b"}, VersionMatchTrue, ReasonVersionMatches},
		{"another release is a mismatch", VersionFacts{Recorded: "4.1.0", Read: true, Reported: "v6.0-sim"}, VersionMatchFalse, ReasonVersionMismatch},
		{"a version raised over an image that ignores it is a mismatch", VersionFacts{Recorded: "4.1.1", Read: true, Reported: "v4.1.0-0"}, VersionMatchFalse, ReasonVersionMismatch},
		{"a build that does not know its release is a mismatch", VersionFacts{Recorded: "4.1.0", Read: true, Reported: "v0-54ce5f6f"}, VersionMatchFalse, ReasonVersionMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := DecideVersionMatch(tc.facts)
			if got.Status != tc.status || got.Reason != tc.reason {
				t.Fatalf("%+v: %s %s (%s), want %s %s", tc.facts, got.Status, got.Reason, got.Message, tc.status, tc.reason)
			}
			if got.Message == "" {
				t.Fatal("no message")
			}
		})
	}
}
