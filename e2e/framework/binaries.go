package framework

import (
	"fmt"
	"os"
	"path/filepath"
)

// KubernetesVersion is the version of the control-plane binaries the
// framework expects; tools/kube pins the same version.
const KubernetesVersion = "v1.37.2"

// binaryNames are the programs hack/build-controlplane.sh produces.
var binaryNames = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"}

// BinDir returns the directory holding the control-plane binaries:
// $ANTHILL_CONTROLPLANE_DIR/bin when set, else the per-user cache that
// hack/build-controlplane.sh fills.
func BinDir() (string, error) {
	if d := os.Getenv("ANTHILL_CONTROLPLANE_DIR"); d != "" {
		return filepath.Join(d, "bin"), nil
	}
	cache, err := CacheDir()
	if err != nil {
		return "", fmt.Errorf("locate control-plane cache: %w", err)
	}
	return filepath.Join(cache, "controlplane", KubernetesVersion, "bin"), nil
}

// CacheDir is anthill's per-user cache, where the hack/ scripts put the
// tools they build: ${XDG_CACHE_HOME:-~/.cache}/anthill.
func CacheDir() (string, error) {
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "anthill"), nil
}

// checkBinaries reports, in one error, every binary missing from dir.
func checkBinaries(dir string) error {
	var missing []string
	for _, n := range binaryNames {
		if st, err := os.Stat(filepath.Join(dir, n)); err != nil || st.IsDir() {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("control-plane binaries %v missing in %s: run 'make controlplane' (hack/build-controlplane.sh) first", missing, dir)
	}
	return nil
}
