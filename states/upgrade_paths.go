package states

import "fmt"

// UpgradePath says that servers running major From may be upgraded to major
// To in one rolling upgrade.
type UpgradePath struct {
	From, To int
	Note     string
}

// UpgradePaths is the compatibility table the Validating state checks every
// running server version against. Gluster supports rolling upgrades one major
// release at a time, with old and new servers serving the same volumes while
// the roll is in progress; skipping a major, or going back, is not a
// supported rolling upgrade. Minor and patch updates within a major are
// always allowed forwards. Add a row when a new major is qualified.
var UpgradePaths = []UpgradePath{
	{From: 4, To: 4, Note: "minor and patch updates within 4"},
	{From: 4, To: 5, Note: "one major step"},
	{From: 5, To: 5, Note: "minor and patch updates within 5"},
	{From: 5, To: 6, Note: "one major step"},
	{From: 6, To: 6, Note: "minor and patch updates within 6"},
	{From: 6, To: 7, Note: "one major step"},
	{From: 7, To: 7, Note: "minor and patch updates within 7"},
	{From: 7, To: 8, Note: "one major step"},
	{From: 8, To: 8, Note: "minor and patch updates within 8"},
	{From: 8, To: 9, Note: "one major step"},
	{From: 9, To: 9, Note: "minor and patch updates within 9"},
	{From: 9, To: 10, Note: "one major step"},
	{From: 10, To: 10, Note: "minor and patch updates within 10"},
	{From: 10, To: 11, Note: "one major step"},
	{From: 11, To: 11, Note: "minor and patch updates within 11"},
}

// CheckUpgradePath returns nil if a server running from may be rolled to
// target, or an error saying why not. Equal versions are trivially fine.
func CheckUpgradePath(from, target string) error {
	f, err := ParseVersion(from)
	if err != nil {
		return err
	}
	t, err := ParseVersion(target)
	if err != nil {
		return err
	}
	switch c := f.Compare(t); {
	case c == 0:
		return nil
	case c > 0:
		return fmt.Errorf("downgrade from %s to %s is not supported", from, target)
	}
	for _, p := range UpgradePaths {
		if p.From == f.Major && p.To == t.Major {
			return nil
		}
	}
	return fmt.Errorf("no supported upgrade path from %s to %s; upgrade one major release at a time", from, target)
}
