package framework

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// ReleaseDirEnv names a release directory the tests install from as it
// is, without building one.
const ReleaseDirEnv = "ANTHILL_RELEASE_DIR"

// A ReleaseDir is a directory `make release` (hack/release.sh) built:
// what docs/install.md has a user install from.
type ReleaseDir struct {
	// Path is the directory.
	Path string
	// ImageRef is image/ref (REPO:TAG@DIGEST), ImageDigest image/digest
	// (the image index's digest).
	ImageRef, ImageDigest string
}

// Version is the release's version, the tag of its image reference.
func (r *ReleaseDir) Version() string {
	name, _, _ := strings.Cut(r.ImageRef, "@")
	return name[strings.LastIndex(name, ":")+1:]
}

// Chart is the packaged chart, anthill-X.Y.Z.tgz.
func (r *ReleaseDir) Chart() string {
	return filepath.Join(r.Path, "anthill-"+strings.TrimPrefix(r.Version(), "v")+".tgz")
}

// ImageLayout is the operator image as an OCI image layout.
func (r *ReleaseDir) ImageLayout() string {
	return filepath.Join(r.Path, "image", "oci")
}

// ImageArchive is the OCI layout in one tar, which docs/install.md has a
// node's containerd import.
func (r *ReleaseDir) ImageArchive() string {
	return filepath.Join(r.Path, "image", "anthill-oci.tar")
}

// OpenReleaseDir reads the image reference and digest of the release
// directory at path.
func OpenReleaseDir(path string) (*ReleaseDir, error) {
	r := &ReleaseDir{Path: path}
	for file, v := range map[string]*string{"ref": &r.ImageRef, "digest": &r.ImageDigest} {
		b, err := os.ReadFile(filepath.Join(path, "image", file))
		if err != nil {
			return nil, fmt.Errorf("release directory %s: %w", path, err)
		}
		*v = strings.TrimSpace(string(b))
	}
	if !strings.HasSuffix(r.ImageRef, "@"+r.ImageDigest) {
		return nil, fmt.Errorf("release directory %s: image/ref %q does not end in image/digest %s", path, r.ImageRef, r.ImageDigest)
	}
	return r, nil
}

// CheckSums does what `sha256sum -c SHA256SUMS` does in the directory,
// as docs/install.md has a user do first, and also fails on a file that
// SHA256SUMS does not list. Every problem is in the error.
func (r *ReleaseDir) CheckSums() error {
	f, err := os.Open(filepath.Join(r.Path, "SHA256SUMS"))
	if err != nil {
		return err
	}
	defer f.Close()
	var errs []error
	listed := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			return fmt.Errorf("SHA256SUMS line %q", sc.Text())
		}
		name = filepath.Clean(name)
		listed[name] = true
		got, err := FileSHA256(filepath.Join(r.Path, name))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if got != sum {
			errs = append(errs, fmt.Errorf("%s: sha256 %s, SHA256SUMS says %s", name, got, sum))
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	err = filepath.WalkDir(r.Path, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(r.Path, p)
		if err != nil {
			return err
		}
		if rel != "SHA256SUMS" && !listed[rel] {
			errs = append(errs, fmt.Errorf("%s is not in SHA256SUMS", rel))
		}
		return nil
	})
	if err != nil {
		return err
	}
	return errors.Join(errs...)
}

// FileSHA256 is the hex SHA-256 of the file at path.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// CurrentReleaseDir returns a release directory of the tree at
// moduleRoot, as the tests install from it:
//
//   - ANTHILL_RELEASE_DIR when set;
//   - dist/release when `make release` built it from the checked-out
//     commit with a clean tree (CI's release step runs before the tests);
//   - otherwise the release dry run (DRY_RUN=1 hack/release.sh) into
//     shared/release. Test processes that pass the same shared directory
//     (make test's ANTHILL_E2E_SET_DIR, one per run) build it once: the
//     first builds under a lock, the others wait for it and reuse it
//     when it was built from the same tree (commit and uncommitted
//     changes).
func CurrentReleaseDir(ctx context.Context, moduleRoot, shared string) (*ReleaseDir, error) {
	if dir := os.Getenv(ReleaseDirEnv); dir != "" {
		return OpenReleaseDir(dir)
	}
	git := func(args ...string) ([]byte, error) {
		out, err := exec.CommandContext(ctx, "git", append([]string{"-C", moduleRoot}, args...)...).Output()
		if err != nil {
			return nil, fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
		}
		return out, nil
	}
	head, err := git("rev-parse", "HEAD")
	if err != nil {
		return nil, err
	}
	changed, err := git("status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return nil, err
	}
	dist := filepath.Join(moduleRoot, "dist", "release")
	built, err := os.ReadFile(filepath.Join(dist, "COMMIT"))
	if err == nil && len(bytes.TrimSpace(changed)) == 0 && bytes.Equal(bytes.TrimSpace(built), bytes.TrimSpace(head)) {
		return OpenReleaseDir(dist)
	}

	// The tree the release is built from: its commit, its uncommitted
	// changes and the names of its untracked files.
	diff, err := git("diff", "HEAD", "--binary")
	if err != nil {
		return nil, err
	}
	status, err := git("status", "--porcelain")
	if err != nil {
		return nil, err
	}
	key := sha256.Sum256(bytes.Join([][]byte{head, diff, status}, []byte{0}))
	dir, err := buildOnce(shared, "release", hex.EncodeToString(key[:]), func(dir string) error {
		cmd := exec.CommandContext(ctx, filepath.Join(moduleRoot, "hack", "release.sh"), dir)
		cmd.Dir = moduleRoot
		cmd.Env = append(os.Environ(), "DRY_RUN=1")
		// A test that ends first stops the whole build, its go builds
		// and tars with it.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("DRY_RUN=1 hack/release.sh: %w\n%s", err, out)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return OpenReleaseDir(dir)
}

// buildOnce returns shared/name, built by build from the tree stamp
// names: the processes that share the directory build it one at a time
// (a lock on shared/name.lock), and each reuses what one before built
// from the same stamp (shared/name.stamp, written once build succeeded).
func buildOnce(shared, name, stamp string, build func(dir string) error) (string, error) {
	if err := os.MkdirAll(shared, 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(filepath.Join(shared, name+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	// Another process may be building it: wait for it. Closing the file
	// (or the end of its process) unlocks it.
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("lock %s: %w", lock.Name(), err)
	}
	dir := filepath.Join(shared, name)
	stampFile := filepath.Join(shared, name+".stamp")
	if b, err := os.ReadFile(stampFile); err == nil && string(b) == stamp {
		return dir, nil
	}
	if err := os.Remove(stampFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := build(dir); err != nil {
		return "", err
	}
	if err := os.WriteFile(stampFile, []byte(stamp), 0o644); err != nil {
		return "", err
	}
	return dir, nil
}
