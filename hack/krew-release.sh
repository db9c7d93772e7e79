#!/usr/bin/env bash
# Builds the kubectl-gluster release archives and the krew plugin manifest
# that names them with their real sha256 checksums.
#
#   hack/krew-release.sh VERSION OUTDIR
#
# VERSION is the release tag (vMAJOR.MINOR.PATCH, as krew requires).
# PLATFORMS (default "linux/amd64 linux/arm64 darwin/amd64 darwin/arm64")
# chooses the archives; BASE_URL where they will be downloaded from
# (default the GitHub release of VERSION). Writes OUTDIR/kubectl-gluster_OS_ARCH.tar.gz
# and OUTDIR/gluster.yaml from manifests/krew/gluster.yaml.in. Each archive
# holds the plugin, its kubectl completion shim (manifests/krew/kubectl_complete-gluster)
# and the project's LICENSE.
set -euo pipefail

version=${1:?usage: hack/krew-release.sh VERSION OUTDIR}
out=${2:?usage: hack/krew-release.sh VERSION OUTDIR}
platforms=${PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}
base=${BASE_URL:-https://github.com/gluster/anthill/releases/download/$version}
root=$(cd "$(dirname "$0")/.." && pwd)

case $version in
v[0-9]*.[0-9]*.[0-9]*) ;;
*) echo "VERSION must look like v1.2.3, got $version" >&2; exit 2 ;;
esac

mkdir -p "$out"
out=$(cd "$out" && pwd)
entries=""
for p in $platforms; do
	os=${p%/*} arch=${p#*/}
	stage=$(mktemp -d)
	(cd "$root" && CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath \
		-ldflags "-s -w -X github.com/gluster/anthill/cmd/internal/cli.Version=$version" \
		-o "$stage/kubectl-gluster" ./cmd/kubectl-gluster)
	install -m 0755 "$root/manifests/krew/kubectl_complete-gluster" "$stage/kubectl_complete-gluster"
	install -m 0644 "$root/LICENSE" "$stage/LICENSE"
	archive=kubectl-gluster_${os}_${arch}.tar.gz
	# Fixed owner and times: the same build gives the same archive.
	tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -czf "$out/$archive" \
		LICENSE kubectl-gluster kubectl_complete-gluster
	rm -rf "$stage"
	sum=$(sha256sum "$out/$archive" | cut -d' ' -f1)
	entries+="  - selector:
      matchLabels:
        os: $os
        arch: $arch
    uri: $base/$archive
    sha256: $sum
    bin: kubectl-gluster
    files:
    - from: kubectl-gluster
      to: .
    - from: kubectl_complete-gluster
      to: .
    - from: LICENSE
      to: .
"
done
{
	sed "s/@VERSION@/$version/" "$root/manifests/krew/gluster.yaml.in"
	printf '%s' "$entries"
} >"$out/gluster.yaml"
echo "wrote $out/gluster.yaml"
