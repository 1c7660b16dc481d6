#!/usr/bin/env bash
# Packs the Cairn packages of an earlier commit, for the upgrade test (e2e/upgrade/README.md).
#
#   scripts/upgrade/pack-build.sh <commit-or-tag> <outdir> [package ...]
#
# Makes a git worktree of <commit> in a temp dir, installs it from the pnpm store
# (--frozen-lockfile --prefer-offline: nothing is downloaded when the store already has it),
# builds the packages named (default: @cairn/core @cairn/kysely; any @cairn/* package of that
# commit may be named) and `pnpm pack`s each into <outdir> as <name>.tgz (e.g. cairn-core.tgz),
# with manifest.json: the commit (full hash), its date and subject, the packages and their
# versions, each tarball's size, and when and with which Node and pnpm it was packed. The worktree
# is removed on exit, success or not.
set -euo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 <commit-or-tag> <outdir> [@cairn/pkg ...]" >&2
  exit 2
fi
ref=$1
outdir=$2
shift 2
packages=("$@")
if [[ ${#packages[@]} -eq 0 ]]; then packages=(@cairn/core @cairn/kysely); fi

repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
commit=$(git -C "$repo" rev-parse --verify "$ref^{commit}")
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/cairn-pack-build.XXXXXX")
tree="$work/tree"

cleanup() {
  git -C "$repo" worktree remove --force "$tree" >/dev/null 2>&1 || true
  rm -rf "$work"
  git -C "$repo" worktree prune >/dev/null 2>&1 || true
}
trap cleanup EXIT

echo "[pack-build] worktree of $commit in $tree" >&2
git -C "$repo" worktree add --detach --quiet "$tree" "$commit"

cd "$tree"
echo "[pack-build] pnpm install --frozen-lockfile --prefer-offline" >&2
# --offline first (nothing fetched); fall back to --prefer-offline when the store lacks something.
if ! pnpm install --frozen-lockfile --offline --reporter=append-only >"$work/install.log" 2>&1; then
  echo "[pack-build] offline install failed (tail below); retrying with --prefer-offline" >&2
  tail -5 "$work/install.log" >&2
  pnpm install --frozen-lockfile --prefer-offline --reporter=append-only >"$work/install.log" 2>&1 || {
    tail -40 "$work/install.log" >&2
    exit 1
  }
fi

filters=()
for p in "${packages[@]}"; do filters+=(--filter "$p"); done
echo "[pack-build] build ${packages[*]}" >&2
# `...` would also build dependents; each named package builds its workspace dependencies first.
filters_deps=()
for p in "${packages[@]}"; do filters_deps+=(--filter "$p..."); done
pnpm "${filters_deps[@]}" --workspace-concurrency=1 run build >"$work/build.log" 2>&1 || {
  tail -40 "$work/build.log" >&2
  exit 1
}

entries=()
for p in "${packages[@]}"; do
  dir=$(pnpm --filter "$p" exec pwd)
  file="$(echo "${p#@}" | tr '/' '-').tgz"
  rm -f "$outdir/$file"
  (cd "$dir" && pnpm pack --pack-destination "$work/pack" >"$work/pack.log" 2>&1) || {
    cat "$work/pack.log" >&2
    exit 1
  }
  packed=$(ls "$work/pack"/*.tgz)
  mv "$packed" "$outdir/$file"
  version=$(node -p "require('$dir/package.json').version")
  size=$(stat -c %s "$outdir/$file")
  echo "[pack-build] $p@$version -> $outdir/$file ($size bytes)" >&2
  entries+=("{\"name\":\"$p\",\"version\":\"$version\",\"file\":\"$file\",\"bytes\":$size}")
done

date=$(git -C "$repo" show -s --format=%cI "$commit")
subject=$(git -C "$repo" show -s --format=%s "$commit")
PACK_BUILD_PNPM=$(pnpm --version) node -e '
  const [commit, ref, date, subject, ...entries] = process.argv.slice(1);
  const manifest = {
    commit, ref, date, subject,
    packages: entries.map((e) => JSON.parse(e)),
    packedAt: new Date().toISOString(),
    node: process.version,
    pnpm: process.env.PACK_BUILD_PNPM,
  };
  process.stdout.write(JSON.stringify(manifest, null, 2) + "\n");
' "$commit" "$ref" "$date" "$subject" "${entries[@]}" >"$outdir/manifest.json"
echo "[pack-build] wrote $outdir/manifest.json" >&2
