#!/usr/bin/env bash
# Runs every test of the project on a fresh machine: installs what it needs, then
#   1. cargo fmt --check, clippy (all targets, warnings denied) and rustdoc (warnings denied),
#   2. the Rust core and storage (cargo test --no-default-features: no JS engine),
#   3. the release library: index.d.ts is current, it imports only Node-API functions HarmonyOS
#      exports, each with its row in docs/arkts-napi.md, and it passes node --test tests/node; then
#      the suite once more against a build whose Node-API fence behaves as ArkTS's does where the
#      host can imitate it (cargo feature arkts-semantics, test builds only),
#   4. the ArkTS/hvigor files (scripts/check-ets.sh), and the library linked for the phone and
#      checked: ELF, NEEDED, every import in the NDK's export lists, registration, size
#      (scripts/link-ohos.sh; it compiles the cfg(target_env = "ohos") code that check-ohos.sh checks).
# Exits non-zero on the first failing step.
set -euo pipefail
cd "$(dirname "$0")/.."
export RUM_NATIVE_QUIET=1

step() { printf '\n==> %s\n' "$*"; }

need() {
  command -v "$1" >/dev/null 2>&1 && return 0
  step "installing $2 (apt)"
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq "$2"; else sudo apt-get update -qq && sudo apt-get install -y -qq "$2"; fi
}
# Rust comes from rustup, not apt: Debian's cargo is older than the crate's rust-version (1.88).
command -v cargo >/dev/null 2>&1 || PATH=$HOME/.cargo/bin:$PATH
if ! command -v cargo >/dev/null 2>&1; then
  echo "cargo not found: install Rust 1.88 or newer with rustup (https://rustup.rs), then run this again" >&2
  exit 1
fi
need cc gcc # the linker cargo calls
need node nodejs
need npm npm
need nm binutils

node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
  echo "Node.js 20 or newer is needed (node --test --test-concurrency, scripts/burst); found $(node --version)." >&2
  echo "Install it from nodejs.org or NodeSource; Debian bookworm's apt package is Node 18." >&2
  exit 1
fi

step "cargo fmt --check (rustfmt.toml)"
cargo fmt --version >/dev/null 2>&1 || rustup component add rustfmt
cargo fmt --check

step "cargo clippy --all-targets -D warnings (with and without the binding)"
cargo clippy --version >/dev/null 2>&1 || rustup component add clippy
cargo clippy --all-targets -- -D warnings
cargo clippy --no-default-features --all-targets -- -D warnings

step "cargo doc --no-deps --document-private-items, warnings denied"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --document-private-items

step "cargo test (core and storage, no JS engine)"
cargo test --no-default-features --all-targets

step "cargo build --release (the cdylib Node loads) and check that index.d.ts is current"
scripts/gen-dts.sh --check
export RUM_NATIVE_LIB="$PWD/target/release/librum_native.so"

step "the library imports only Node-API functions HarmonyOS exports, each audited in docs/arkts-napi.md"
scripts/check-napi-symbols.sh "$RUM_NATIVE_LIB"

step "npm ci --prefix tests (Ajv, to validate documents against the RUM event format's schemas)"
npm ci --prefix tests --no-audit --no-fund --loglevel=error
if [ ! -d ../shared/rum-events-format/schemas ] && [ -z "${RUM_EVENTS_FORMAT:-}" ]; then
  echo "note: ../shared/rum-events-format is not beside this clone: the schema tests will skip" >&2
fi

step "npm ci --prefix tests/ets-host, and the HAR's capture code built for Node (benches/capture-code.mjs)"
npm ci --prefix tests/ets-host --no-audit --no-fund --loglevel=error
RUM_CAPTURE_JS=$(node --input-type=module -e "
  const { buildCaptureCode } = await import('$PWD/benches/capture-code.mjs');
  console.log((await buildCaptureCode()).file);")
export RUM_CAPTURE_JS

step "node --test tests/node"
node --test --test-concurrency=1 tests/node/

step "node --test tests/node against the ArkTS-semantics build (docs/arkts-napi.md)"
CARGO_TARGET_DIR=target/arkts cargo build --release --lib --features arkts-semantics
RUM_NATIVE_LIB="$PWD/target/arkts/release/librum_native.so" node --test --test-concurrency=1 tests/node/

if [ -x scripts/check-ets.sh ]; then
  step "ArkTS facade and hvigor files"
  scripts/check-ets.sh
fi

step "the library linked for the phone (aarch64-unknown-linux-ohos) and checked (docs/ohos-artifact.md)"
nice scripts/link-ohos.sh

step "all tests passed"
