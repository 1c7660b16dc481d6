#!/usr/bin/env bash
# Builds the server images that the conformance suite's Testcontainers path asks for, from Debian's
# packages, where no image registry can be reached (the project's CI machines). One folder per
# image next to this script holds its definition:
#
#   image.conf             TAG, PACKAGES (Debian packages for debootstrap --include), CHANGES (the
#                          Dockerfile instructions given to `docker import --change`), optional
#                          INPUTS (extra files whose content is part of the image) and an optional
#                          prepare() run on the root file system before it is packed
#   docker-entrypoint.sh   installed as /usr/local/bin/docker-entrypoint.sh, as in the official images
#
# An image is built as
#   debootstrap --variant=minbase --include=PACKAGES bookworm ROOTFS  +  entrypoint  +  prepare
#   tar -C ROOTFS -c . | docker import --change ... - TAG
# and labelled with a hash of its inputs (this script, its folder, INPUTS, the Debian suite). An
# image whose label matches is not built again; the packed root file system is kept in the cache
# folder by the same hash, so a Docker data root that starts empty only pays `docker import`.
#
#   scripts/images/build.sh [--cache DIR] [NAME ...]     (default: every image; needs root, docker)
#
# The Docker daemon is the one DOCKER_HOST names. See docs/testing.md ("Testcontainers in CI").
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CACHE="${CAIRN_CI_CACHE:-/var/cache/cairn}/images"
SUITE=bookworm
MIRROR="${CAIRN_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
LABEL=org.cairn.image-hash

names=()
while [ $# -gt 0 ]; do
  case "$1" in
    --cache) CACHE="$2"; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) names+=("$1"); shift ;;
  esac
done
if [ "${#names[@]}" -eq 0 ]; then
  for d in "$HERE"/*/; do [ -f "$d/image.conf" ] && names+=("$(basename "$d")"); done
fi
mkdir -p "$CACHE/debs"

# The definition of one image, read in a subshell so that images cannot see each other's settings.
# Prints: TAG, then the hash.
describe() {
  ( # shellcheck disable=SC1090
    INPUTS=(); source "$HERE/$1/image.conf"
    for f in "${INPUTS[@]}"; do
      [ -f "$ROOT/$f" ] || { echo "error: image $1: input $f is missing (build it first)" >&2; exit 1; }
    done
    echo "$TAG"
    { echo "$SUITE"; cat "$HERE/build.sh"
      find "$HERE/$1" -type f | LC_ALL=C sort | while read -r f; do echo "${f#"$HERE"/}"; cat "$f"; done
      for f in "${INPUTS[@]}"; do echo "$f"; cat "$ROOT/$f"; done
    } | sha256sum | cut -c1-16 )
}

# Builds the packed root file system of image $1 with hash $2 into $CACHE/$1-$2.tar.
build_rootfs() {
  local name="$1" hash="$2" rootfs="$CACHE/rootfs-$1-$$" started=$SECONDS
  ( # shellcheck disable=SC1090
    INPUTS=(); PACKAGES=""; source "$HERE/$name/image.conf"
    trap 'rm -rf "$rootfs"' EXIT # also when a step fails
    rm -rf "$rootfs"
    # --cache-dir keeps the downloaded .debs: a changed definition does not download them again.
    debootstrap --variant=minbase --cache-dir="$CACHE/debs" ${PACKAGES:+--include="$PACKAGES"} \
      "$SUITE" "$rootfs" "$MIRROR" > "$CACHE/$name.debootstrap.log" 2>&1 \
      || { tail -20 "$CACHE/$name.debootstrap.log" >&2; echo "error: debootstrap for $name failed" >&2; exit 1; }
    install -m 0755 "$HERE/$name/docker-entrypoint.sh" "$rootfs/usr/local/bin/docker-entrypoint.sh"
    if declare -F prepare >/dev/null; then ROOTFS="$rootfs" REPO="$ROOT" prepare; fi
    # Smaller images: no documentation, manuals, translations or package lists.
    rm -rf "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* \
      "$rootfs"/usr/share/locale/* "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* \
      "$rootfs"/var/log/*.log
    tar --numeric-owner -C "$rootfs" -cf "$CACHE/$name-$hash.tar.tmp" .
    mv "$CACHE/$name-$hash.tar.tmp" "$CACHE/$name-$hash.tar"
    rm -rf "$rootfs"
  )
  echo "image $name: root file system built in $((SECONDS - started))s ($(du -h "$CACHE/$name-$hash.tar" | cut -f1))"
}

import_image() {
  local name="$1" tag="$2" hash="$3" started=$SECONDS change args=()
  # shellcheck disable=SC1090
  local CHANGES=(); source "$HERE/$name/image.conf"
  for change in "${CHANGES[@]}" "LABEL $LABEL=$hash"; do args+=(--change "$change"); done
  docker import "${args[@]}" "$CACHE/$name-$hash.tar" "$tag" > /dev/null
  echo "image $name: $tag imported in $((SECONDS - started))s"
  # Older packed root file systems of this image are of no further use.
  find "$CACHE" -maxdepth 1 -name "$name-*.tar" ! -name "$name-$hash.tar" -delete
}

declare -A TAGS HASHES
todo=()
for name in "${names[@]}"; do
  [ -f "$HERE/$name/image.conf" ] || { echo "error: no image definition $HERE/$name/image.conf" >&2; exit 1; }
  mapfile -t d < <(describe "$name")
  [ "${#d[@]}" -eq 2 ] || exit 1
  TAGS[$name]="${d[0]}"; HASHES[$name]="${d[1]}"
  have="$(docker image inspect --format "{{index .Config.Labels \"$LABEL\"}}" "${d[0]}" 2>/dev/null || true)"
  if [ "$have" = "${d[1]}" ]; then
    echo "image $name: ${d[0]} is up to date ($LABEL=${d[1]})"
  else
    todo+=("$name")
  fi
done

# Root file systems not in the cache are built one after the other: debootstraps in parallel
# race for the shared package cache and, on two cores, take longer in total.
for name in "${todo[@]}"; do
  if [ ! -f "$CACHE/$name-${HASHES[$name]}.tar" ]; then build_rootfs "$name" "${HASHES[$name]}"; fi
done
for name in "${todo[@]}"; do import_image "$name" "${TAGS[$name]}" "${HASHES[$name]}"; done
