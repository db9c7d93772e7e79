package framework

import (
	"encoding/json"
	"fmt"
	"os"
)

// A suite run as several processes at once, each with its own control
// plane (make test runs the e2e tests that must run alone beside those
// that run side by side), records each process's requests apart; the RBAC
// usage check needs them all, so each process saves what it recorded
// (SaveUses) and the check runs on their union (LoadUses, MergeUses).

// usesEntry is one Request and its use in a saved file (JSON objects
// cannot have a struct as key).
type usesEntry struct {
	Request Request
	Use     RequestUse
}

// SaveUses writes uses to path.
func SaveUses(path string, uses map[Request]*RequestUse) error {
	entries := make([]usesEntry, 0, len(uses))
	for r, u := range uses {
		entries = append(entries, usesEntry{Request: r, Use: *u})
	}
	raw, err := json.Marshal(entries)
	if err != nil {
		return err
	}
	// Written whole under another name first, so that a process looking
	// for the others' files never reads half of one.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// LoadUses reads a file SaveUses wrote.
func LoadUses(path string) (map[Request]*RequestUse, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var entries []usesEntry
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := make(map[Request]*RequestUse, len(entries))
	for _, e := range entries {
		u := e.Use
		out[e.Request] = &u
	}
	return out, nil
}

// MergeUses adds src's uses into dst, as if one recorder had seen both:
// the counts add up, the first test is the earliest allowed request's
// (a denied one's only while neither saw an allowed one), and the names
// are the union, bounded as the recorder bounds them.
func MergeUses(dst, src map[Request]*RequestUse) {
	for r, s := range src {
		d := dst[r]
		if d == nil {
			dst[r] = s.clone()
			continue
		}
		earlier := s.FirstAt.Before(d.FirstAt)
		switch {
		case s.Allowed > 0 && d.Allowed == 0, s.Allowed > 0 && earlier, s.Allowed == 0 && d.Allowed == 0 && earlier:
			d.FirstTest, d.FirstAt = s.FirstTest, s.FirstAt
		}
		d.Allowed += s.Allowed
		d.Denied += s.Denied
		if d.Names == nil {
			d.Names = map[string]bool{}
		}
		d.NamesTruncated = d.NamesTruncated || s.NamesTruncated
		for n := range s.Names {
			d.addName(n)
		}
	}
}
