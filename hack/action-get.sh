#!/usr/bin/env bash
# action.yml's first step: downloads the released catalogbot binary of the action's ref into
# $RUNNER_TEMP/catalogbot and verifies it against the release's SHA256SUMS. The ref is a release tag
# (vX.Y.Z) or a full commit SHA (the pinning GitHub's hardening guide asks for): a SHA is looked up among
# the action repository's release tags with `git ls-remote --tags` (git is on every GitHub-hosted runner;
# no token, no API rate limit), and a release commit gets that release's binary. Writes found=true|false
# to $GITHUB_OUTPUT: false (build from source instead) when the ref is no release (a branch, or a commit no
# release tag names), the tags cannot be listed, or the release has no binary for this runner. A binary
# whose checksum does not match fails the step: never run it, never fall back silently.
# Env: ACTION_REF (github.action_ref), ACTION_REPOSITORY (github.action_repository, default
# catalogbot/catalogbot), RUNNER_TEMP, RUNNER_OS, RUNNER_ARCH, GITHUB_OUTPUT, GITHUB_SERVER_URL;
# CATALOGBOT_RELEASE_URL overrides the release download root (default
# $GITHUB_SERVER_URL/$ACTION_REPOSITORY/releases/download), CATALOGBOT_GIT_URL the repository whose tags
# are listed (default $GITHUB_SERVER_URL/$ACTION_REPOSITORY.git).
set -euo pipefail
found() { echo "found=$1" >>"$GITHUB_OUTPUT"; exit 0; }
ref="${ACTION_REF:-}"
repository="${ACTION_REPOSITORY:-catalogbot/catalogbot}"
server="${GITHUB_SERVER_URL:-https://github.com}"
if [[ "$ref" =~ ^[0-9a-f]{40}$ ]]; then
  url="${CATALOGBOT_GIT_URL:-$server/$repository.git}"
  # An annotated tag is listed twice: its own object, then (name^{}) the commit it names.
  if ! tags="$(GIT_TERMINAL_PROMPT=0 git -c http.lowSpeedLimit=1000 -c http.lowSpeedTime=30 ls-remote --tags "$url" 2>&1)"; then
    echo "catalogbot: cannot list the release tags of $url: building from source"
    printf '%s\n' "$tags" | tail -n 3
    found false
  fi
  tag="$(printf '%s\n' "$tags" | awk -v sha="$ref" '$1 == sha { n = $2; sub(/^refs\/tags\//, "", n); sub(/\^\{\}$/, "", n); print n }' |
    grep -E '^v[0-9]+\.[0-9]+\.[0-9]+$' | sort -V | tail -n 1 || true)"
  if [ -z "$tag" ]; then
    echo "catalogbot: commit $ref is not a release (no vX.Y.Z tag of $url names it): building from source"
    found false
  fi
  echo "catalogbot: commit $ref is release $tag"
  ref="$tag"
fi
case "$ref" in
v[0-9]*.[0-9]*.[0-9]*) ;;
*) echo "catalogbot: $ref is not a release tag: building from source"; found false ;;
esac
case "${RUNNER_OS:-Linux}" in Linux) os=linux ;; macOS) os=darwin ;; *) echo "catalogbot: no release binary for ${RUNNER_OS}: building from source"; found false ;; esac
case "${RUNNER_ARCH:-X64}" in X64) arch=amd64 ;; ARM64) arch=arm64 ;; *) echo "catalogbot: no release binary for ${RUNNER_ARCH}: building from source"; found false ;; esac
root="${CATALOGBOT_RELEASE_URL:-$server/$repository/releases/download}/$ref"
file="catalogbot_${ref#v}_${os}_${arch}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
get() { curl -fsSL --retry 3 --max-time 120 -o "$tmp/$1" "$root/$1"; }
if ! get SHA256SUMS || ! get "$file"; then
  echo "catalogbot: no release binary $file at $root: building from source"
  found false
fi
want="$(awk -v f="$file" '$2 == f || $2 == "*" f { print $1 }' "$tmp/SHA256SUMS")"
if command -v sha256sum >/dev/null; then sum=(sha256sum); else sum=(shasum -a 256); fi
got="$("${sum[@]}" "$tmp/$file" | awk '{print $1}')"
if [ -z "$want" ] || [ "$want" != "$got" ]; then
  echo "::error title=catalogbot::the checksum of $file ($got) does not match the release's SHA256SUMS (${want:-no entry}): not running it" >&2
  exit 1
fi
install -m 0755 "$tmp/$file" "$RUNNER_TEMP/catalogbot"
echo "catalogbot: using the released $file (sha256 $got)"
found true
