#!/usr/bin/env bash
# Type-checks the crate's HarmonyOS code paths (everything under cfg(target_env = "ohos")) on a
# machine without the HarmonyOS SDK: nightly cargo builds std for aarch64-unknown-linux-ohos from
# source (-Zbuild-std) and checks the crate without linking. OHOS_NDK_HOME points at an empty
# stand-in folder, enough for napi-build-ohos, which only adds link paths.
#
#   scripts/check-ohos.sh                      # aarch64-unknown-linux-ohos
#   OHOS_CHECK_TARGETS="aarch64-unknown-linux-ohos x86_64-unknown-linux-ohos" scripts/check-ohos.sh
#
# Needs rustup; installs the nightly toolchain and its rust-src component when missing. Output goes to
# target/ohos-check so it never invalidates the host build. scripts/link-ohos.sh goes further: it
# links the library for the phone and checks what was linked (what scripts/test.sh runs).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TARGETS="${OHOS_CHECK_TARGETS:-aarch64-unknown-linux-ohos}"

fail() {
  echo "check-ohos: $*" >&2
  echo "FAIL ohos-check"
  exit 1
}

[[ -f "$ROOT/Cargo.toml" ]] || fail "no Cargo.toml in $ROOT"
# The nightly toolchain with rust-src, installed when missing (shared with scripts/link-ohos.sh).
OHOS_LOG=check-ohos
# shellcheck source=scripts/ohos-cross.sh
source "$ROOT/scripts/ohos-cross.sh"
ohos_need_nightly_std

STANDIN_NDK="$(mktemp -d "${TMPDIR:-/tmp}/ohos-ndk-standin.XXXXXX")"
trap 'rm -rf "$STANDIN_NDK"' EXIT

for target in $TARGETS; do
  echo "check-ohos: cargo +nightly check --target $target (-Zbuild-std)"
  if ! (cd "$ROOT" && OHOS_NDK_HOME="$STANDIN_NDK" CARGO_TARGET_DIR="$ROOT/target/ohos-check" \
      cargo +nightly check -Zbuild-std=std,panic_abort --target "$target" --lib); then
    fail "cargo check failed for $target"
  fi
done
echo "PASS ohos-check: the cfg(target_env = \"ohos\") code compiles for $TARGETS"
