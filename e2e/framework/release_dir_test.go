package framework

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fakeRelease writes a release directory's image files, a chart and
// their SHA256SUMS, as hack/release.sh lays them out.
func fakeRelease(t *testing.T, dir string) {
	t.Helper()
	digest := "sha256:" + strings.Repeat("ab", 32)
	files := map[string]string{
		"image/digest":      digest + "\n",
		"image/ref":         "quay.io/gluster/anthill:v1.2.3@" + digest + "\n",
		"anthill-1.2.3.tgz": "chart",
	}
	var sums []string
	for name, content := range files {
		writeFile(t, filepath.Join(dir, name), content)
		sum := sha256.Sum256([]byte(content))
		sums = append(sums, hex.EncodeToString(sum[:])+"  ./"+name)
	}
	writeFile(t, filepath.Join(dir, "SHA256SUMS"), strings.Join(sums, "\n")+"\n")
}

func TestReleaseDirReadsTheImageAndChecksTheSums(t *testing.T) {
	dir := t.TempDir()
	fakeRelease(t, dir)
	r, err := OpenReleaseDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Version() != "v1.2.3" || r.Chart() != filepath.Join(dir, "anthill-1.2.3.tgz") || r.ImageDigest != "sha256:"+strings.Repeat("ab", 32) {
		t.Errorf("version %s, chart %s, digest %s", r.Version(), r.Chart(), r.ImageDigest)
	}
	if err := r.CheckSums(); err != nil {
		t.Fatalf("the sums of an intact directory: %v", err)
	}

	writeFile(t, r.Chart(), "another chart")
	writeFile(t, filepath.Join(dir, "extra"), "x")
	err = r.CheckSums()
	for _, want := range []string{"anthill-1.2.3.tgz: sha256 ", "extra is not in SHA256SUMS"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a changed chart and an unlisted file: %v; want %q", err, want)
		}
	}

	writeFile(t, filepath.Join(dir, "image", "digest"), "sha256:"+strings.Repeat("cd", 32))
	if _, err := OpenReleaseDir(dir); err == nil {
		t.Error("image/ref and image/digest disagree, and the directory opened")
	}
}

func TestBuildOnceBuildsOncePerTree(t *testing.T) {
	shared := t.TempDir()
	var builds, running atomic.Int32
	build := func(content string) func(dir string) error {
		return func(dir string) error {
			if running.Add(1) > 1 {
				t.Error("two builds ran at once")
			}
			defer running.Add(-1)
			builds.Add(1)
			writeFile(t, filepath.Join(dir, "content"), content)
			return nil
		}
	}

	// Processes of one make test run ask at once: one builds, the others
	// wait and reuse it.
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dir, err := buildOnce(shared, "release", "tree-1", build("one"))
			if err != nil {
				t.Error(err)
				return
			}
			if b, err := os.ReadFile(filepath.Join(dir, "content")); err != nil || string(b) != "one" {
				t.Errorf("read the built directory: %q, %v", b, err)
			}
		}()
	}
	wg.Wait()
	if n := builds.Load(); n != 1 {
		t.Fatalf("four callers with one tree built %d times; want once", n)
	}

	// Another tree: built again, from scratch.
	writeFile(t, filepath.Join(shared, "release", "stale"), "x")
	dir, err := buildOnce(shared, "release", "tree-2", build("two"))
	if err != nil {
		t.Fatal(err)
	}
	if n := builds.Load(); n != 2 {
		t.Errorf("a changed tree built %d times in all; want 2", n)
	}
	if _, err := os.Stat(filepath.Join(dir, "stale")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("what the build before left is still there (%v)", err)
	}

	// A failed build is not reused: the next caller builds.
	failed := errors.New("release.sh failed")
	if _, err := buildOnce(shared, "release", "tree-3", func(string) error { return failed }); !errors.Is(err, failed) {
		t.Fatalf("a failed build returned %v", err)
	}
	if _, err := buildOnce(shared, "release", "tree-3", build("three")); err != nil {
		t.Fatal(err)
	}
	if n := builds.Load(); n != 3 {
		t.Errorf("after a failed build the next caller did not build (%d builds)", n)
	}
}
