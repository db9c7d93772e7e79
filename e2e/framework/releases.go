package framework

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
)

// Release is a released version of anthill and the commit it was cut from.
type Release struct {
	Version, Commit string
}

// releaseHeading is a CHANGELOG.md heading of a release:
// "## v1.2.3 — DATE, commit <40 hex digits>".
var releaseHeading = regexp.MustCompile(`^## (v\d+\.\d+\.\d+)\s.*\bcommit ([0-9a-f]{40})\b`)

// Releases lists the releases CHANGELOG.md records, newest first.
func Releases(moduleRoot string) ([]Release, error) {
	f, err := os.Open(filepath.Join(moduleRoot, "CHANGELOG.md"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Release
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := releaseHeading.FindStringSubmatch(sc.Text()); m != nil {
			out = append(out, Release{Version: m[1], Commit: m[2]})
		}
	}
	return out, sc.Err()
}

// exportCommit writes the tree of r's commit into dir with git archive.
func exportCommit(ctx context.Context, moduleRoot string, r Release, dir string) error {
	archive := exec.CommandContext(ctx, "git", "-C", moduleRoot, "archive", "--format=tar", r.Commit)
	extract := exec.CommandContext(ctx, "tar", "-x", "-C", dir)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return err
	}
	extract.Stdin = pipe
	var archiveErr, extractErr bytes.Buffer
	archive.Stderr, extract.Stderr = &archiveErr, &extractErr
	if err := extract.Start(); err != nil {
		return err
	}
	if err := archive.Run(); err != nil {
		_ = extract.Wait()
		return fmt.Errorf("git archive %s (release %s): %w\n%s", r.Commit, r.Version, err, archiveErr.String())
	}
	if err := extract.Wait(); err != nil {
		return fmt.Errorf("extract release %s: %w\n%s", r.Version, err, extractErr.String())
	}
	return nil
}
