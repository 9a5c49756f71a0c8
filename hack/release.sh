#!/usr/bin/env bash
# Builds a catalogbot release into dist/VERSION (or $DIST):
#   catalogbot_<version>_<os>_<arch>   static binaries (CGO_ENABLED=0, -trimpath, no build ID, version
#                                      stamped) for linux and darwin, amd64 and arm64
#   SHA256SUMS                         their checksums (what action.yml verifies before running a binary)
#   catalogbot_<version>_image.tar     the bot's multi-arch image (linux/amd64, linux/arm64) as an OCI
#                                      layout archive, built daemonlessly by build.ProgramImage
# Everything is built from the commit HEAD names, exported to a temporary directory: untracked files and
# edits or commits made while it runs do not get in. The same commit, Go toolchain and SOURCE_DATE_EPOCH
# (default: the commit's time) give byte-identical files; another commit gives another image even when
# the binaries are identical, since the image records the commit (revision label) and its time (file
# times, created). With IMAGE=registry/repo:tag the image is also pushed (by digest, then the tag).
# The tag VERSION is created at the commit once everything is built (a tag of that name elsewhere is
# refused before anything is built).
# Usage: hack/release.sh v1.2.3
# Env: BASE (the image's base: CA certificates and a non-root user; pin it by digest for a byte-identical
# image; default the distroless static non-root image; "scratch" for none), IMAGE, DIST.
set -euo pipefail
version="${1:?usage: hack/release.sh VERSION (e.g. v1.2.3)}"
case "$version" in v[0-9]*.[0-9]*.[0-9]*) ;; *) echo "release.sh: $version is not vMAJOR.MINOR.PATCH" >&2; exit 2 ;; esac
cd "$(dirname "$0")/.."
top="$(pwd)"
dist="${DIST:-dist/$version}"
base="${BASE:-gcr.io/distroless/static-debian12:nonroot}"
commit="$(git rev-parse HEAD)"
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct "$commit")}"
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  echo "release.sh: the work tree has uncommitted changes: a release is built from a commit" >&2
  exit 2
fi
# The release names a tag: it is created at the commit (after the build), and a tag of that name at
# another commit is refused, so what the README installs (@vX.Y.Z, the Action's release lookup) exists.
if tagged="$(git rev-parse -q --verify "refs/tags/$version^{commit}")" && [ "$tagged" != "$commit" ]; then
  echo "release.sh: tag $version already names commit $tagged, not $commit" >&2
  exit 2
fi
rm -rf "$dist"
mkdir -p "$dist"
dist="$(cd "$dist" && pwd)"
src="$(mktemp -d "${TMPDIR:-/tmp}/catalogbot-release-src.XXXXXX")"
trap 'rm -rf "$src"' EXIT
git archive --format=tar "$commit" | tar -x -C "$src"
echo "release.sh: building $version from commit $commit (SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH, $(go version))" >&2
cd "$src"
export GOWORK=off
bins=()
for os in linux darwin; do
  for arch in amd64 arm64; do
    out="$dist/catalogbot_${version#v}_${os}_${arch}"
    CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" GOFLAGS=-mod=readonly go build -trimpath -buildvcs=false -pgo=cmd/catalogbot/release.pgo \
      -ldflags "-s -w -buildid= -X main.ldflagsVersion=$version" -o "$out" ./cmd/catalogbot
    if [ "$os" = linux ]; then bins+=(--bin "linux/$arch=$out"); fi
  done
done
(cd "$dist" && sha256sum catalogbot_* >SHA256SUMS)
image_args=(--base "$base" "${bins[@]}" --label "org.opencontainers.image.revision=$commit"
  --label "org.opencontainers.image.version=$version" --label "org.opencontainers.image.source=https://github.com/catalogbot/catalogbot"
  --layout "$dist/catalogbot_${version#v}_image.tar" --ref "ghcr.io/catalogbot/catalogbot:$version")
if [ -n "${IMAGE:-}" ]; then image_args+=(--push "$IMAGE"); fi
# releaseimage is in the tools module at hack/ (its own go.mod: the product's lists only what it links)
digest="$(cd hack && GOFLAGS=-mod=readonly go run -trimpath -buildvcs=false ./releaseimage "${image_args[@]}")"
(cd "$dist" && sha256sum "catalogbot_${version#v}_image.tar" >>SHA256SUMS)
if [ -z "${tagged:-}" ]; then git -C "$top" tag "$version" "$commit"; fi
echo "release $version of $commit in $dist; image $digest; tag $version (publish it: git push origin $version)"
