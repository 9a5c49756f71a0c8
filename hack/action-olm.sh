#!/usr/bin/env bash
# action.yml's smoke step: OLM's release manifests (deploy/upstream/quickstart/crds.yaml and olm.yaml of
# github.com/operator-framework/operator-lifecycle-manager at OLM_VERSION), fetched through the Go module
# proxy, whose downloads the Go checksum database verifies: a pinned version always gives the same bytes,
# and nothing is taken from a moving URL. Kept in $CATALOGBOT_OLM_CACHE/<version> (default
# ${XDG_CACHE_HOME:-$HOME/.cache}/catalogbot/olm), so a cached runner downloads it once.
# Writes dir=<manifests directory> to $GITHUB_OUTPUT.
# Env: OLM_VERSION (e.g. v0.33.0), GITHUB_OUTPUT; GOFLAGS/GOPROXY as go uses them.
set -euo pipefail
version="${OLM_VERSION:?OLM_VERSION is not set}"
# A strict match: the version names a cache directory, so nothing like v1.2.3/../../x may pass.
if ! [[ "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  echo "catalogbot: olm-version $version is not a release version (vX.Y.Z)" >&2
  exit 1
fi
dir="${CATALOGBOT_OLM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/catalogbot/olm}/$version"
if [ ! -s "$dir/crds.yaml" ] || [ ! -s "$dir/olm.yaml" ]; then
  mod="github.com/operator-framework/operator-lifecycle-manager@$version"
  json="$(cd / && go mod download -json "$mod" || true)"
  src="$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  if [ -z "$src" ]; then
    echo "catalogbot: go mod download $mod failed:" >&2
    printf '%s\n' "$json" | grep '"Error"' >&2 || true
    exit 1
  fi
  quick="$src/deploy/upstream/quickstart"
  if [ ! -s "$quick/crds.yaml" ] || [ ! -s "$quick/olm.yaml" ]; then
    echo "catalogbot: $mod has no deploy/upstream/quickstart/{crds,olm}.yaml" >&2
    exit 1
  fi
  tmp="$(mktemp -d "${dir%/*}/.tmp-XXXXXX" 2>/dev/null || { mkdir -p "${dir%/*}" && mktemp -d "${dir%/*}/.tmp-XXXXXX"; })"
  cp "$quick/crds.yaml" "$quick/olm.yaml" "$tmp/"
  chmod 0755 "$tmp"
  chmod 0644 "$tmp"/*.yaml
  rm -rf "$dir"
  mv "$tmp" "$dir"
fi
echo "catalogbot: OLM $version manifests in $dir"
echo "dir=$dir" >>"$GITHUB_OUTPUT"
