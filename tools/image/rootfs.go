package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// rootfsOptions pack a prepared root file system as a one-layer image:
// the test images of the components anthill runs (hack/build-test-images.sh),
// whose files come from Debian packages or a static binary rather than
// from a Go build of anthill.
type rootfsOptions struct {
	dir, ref, out, arch string
	// config is the image configuration as JSON: Entrypoint, Cmd, Env,
	// WorkingDir, User, Labels (the OCI config's "config" object).
	config string
	epoch  int64
}

// packRootfs writes out/oci (an OCI layout naming ref) and out/image.tar
// (an OCI archive that ctr images import takes) from the directory.
// Every entry is owned by root and dated epoch; modes (setuid included),
// symbolic links and empty directories are kept; hard links become copies.
func packRootfs(o rootfsOptions) error {
	ref, err := name.ParseReference(o.ref)
	if err != nil {
		return err
	}
	tag, ok := ref.(name.Tag)
	if !ok {
		return fmt.Errorf("--ref %q: want a tag", o.ref)
	}
	var cfg v1.Config
	if err := json.Unmarshal([]byte(o.config), &cfg); err != nil {
		return fmt.Errorf("--config: %w", err)
	}
	when := time.Unix(o.epoch, 0).UTC()
	layer, err := dirLayer(o.dir, when)
	if err != nil {
		return err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	if img, err = mutate.AppendLayers(img, layer); err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", o.arch
	cf.Created = v1.Time{Time: when}
	cf.Config = cfg
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return err
	}
	p, names, err := newLayout(o.out, tag)
	if err != nil {
		return err
	}
	return writeImage(p, names, img, tag, filepath.Join(o.out, "image.tar"))
}

// dirLayer is the layer of every entry under root, in lexical order.
func dirLayer(root string, when time.Time) (v1.Layer, error) {
	var paths []string
	err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != root {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(paths)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(root, p)
		h := &tar.Header{Name: filepath.ToSlash(rel), Mode: int64(fi.Mode().Perm()), ModTime: when, Format: tar.FormatPAX}
		if fi.Mode()&fs.ModeSetuid != 0 {
			h.Mode |= 0o4000
		}
		if fi.Mode()&fs.ModeSetgid != 0 {
			h.Mode |= 0o2000
		}
		if fi.Mode()&fs.ModeSticky != 0 {
			h.Mode |= 0o1000
		}
		var data []byte
		switch {
		case fi.IsDir():
			h.Typeflag, h.Name = tar.TypeDir, h.Name+"/"
		case fi.Mode()&fs.ModeSymlink != 0:
			h.Typeflag = tar.TypeSymlink
			if h.Linkname, err = os.Readlink(p); err != nil {
				return nil, err
			}
		case fi.Mode().IsRegular():
			h.Typeflag = tar.TypeReg
			if data, err = os.ReadFile(p); err != nil {
				return nil, err
			}
			h.Size = int64(len(data))
		default:
			// Device nodes, sockets and pipes belong to the runtime.
			continue
		}
		if strings.HasPrefix(h.Name, "../") {
			return nil, fmt.Errorf("%s is outside %s", p, root)
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	raw := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(raw)), nil
	}, tarball.WithMediaType(types.OCILayer))
}
