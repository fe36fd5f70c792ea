#!/usr/bin/env bash
# Links release librum_native.so for the phone (arm64-v8a, aarch64-unknown-linux-ohos) and checks
# the artifact (scripts/check-ohos-lib.sh: ELF machine, NEEDED, every import in the NDK's export
# lists, self-registration, size). scripts/test.sh runs it, so CI links what the phone loads.
#
#   scripts/link-ohos.sh              # OHOS_NDK_HOME set: the NDK links; unset: the stand-ins
#   scripts/link-ohos.sh --install    # then also place it, stripped, in ets/libs/arm64-v8a/
#
# Without OHOS_NDK_HOME it needs no HarmonyOS SDK: zig's linker from PyPI's ziglang and stub NDK
# libraries generated from scripts/ohos-ndk/*.txt (scripts/ohos-cross.sh), nightly cargo with
# rust-src (-Zbuild-std), python3 with pip and binutils; what is missing is installed (rustup, pip,
# apt). Everything it builds is cached under target/ohos-link. The stand-in link is a check of what
# the NDK would link; a library for a phone is best linked by the NDK (scripts/build-ohos.sh).
# Exit status: 0 when it linked and every check passed; 1 when the build or a check failed; 2 when
# something it needs is missing.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OHOS_LOG=link-ohos
INSTALL=0
for arg in "$@"; do
  case "$arg" in
    --install) INSTALL=1 ;;
    -h | --help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "link-ohos: unknown argument $arg (see --help)" >&2; exit 2 ;;
  esac
done

# shellcheck source=scripts/ohos-cross.sh
source "$ROOT/scripts/ohos-cross.sh"

started=$SECONDS
ohos_build arm64-v8a
echo "link-ohos: linked in $((SECONDS - started)) s: ${OHOS_BUILT#"$ROOT/"}"
"$ROOT/scripts/check-ohos-lib.sh" "$OHOS_BUILT" arm64-v8a

# The check must be able to fail: against export lists without napi_module_register (which every
# build imports), it has to fail and name it.
lists="$(mktemp -d "${TMPDIR:-/tmp}/ohos-ndk-lists.XXXXXX")"
trap 'rm -rf "$lists"' EXIT
cp "$ROOT"/scripts/ohos-ndk/*.txt "$lists/"
awk '$1 != "napi_module_register"' "$ROOT/scripts/ohos-ndk/libace_napi.z.txt" >"$lists/libace_napi.z.txt"
if out="$(OHOS_NDK_LISTS="$lists" "$ROOT/scripts/check-ohos-lib.sh" "$OHOS_BUILT" arm64-v8a 2>&1)"; then
  echo "link-ohos: the check passed with napi_module_register missing from the export lists" >&2
  exit 1
elif ! grep -q '^ *napi_module_register$' <<<"$out"; then
  echo "link-ohos: with napi_module_register missing from the export lists, the check failed without naming it:" >&2
  echo "$out" >&2
  exit 1
fi
echo "link-ohos: and the check fails, naming it, when an import is missing from the export lists"
# And it fails a library that needs nothing and registers nothing (a stand-in stub, when built).
stub="$OHOS_LINK_DIR/ndk/native/sysroot/usr/lib/aarch64-linux-ohos/libhilog_ndk.z.so"
if [[ -z "${OHOS_NDK_HOME:-}" && -f "$stub" ]]; then
  if out="$("$ROOT/scripts/check-ohos-lib.sh" "$stub" arm64-v8a 2>&1)"; then
    echo "link-ohos: the check passed a stub library that has no NEEDED and registers nothing" >&2
    exit 1
  elif ! grep -q 'FAIL  NEEDED' <<<"$out" || ! grep -q 'FAIL  registration' <<<"$out"; then
    echo "link-ohos: the check failed the stub library, but not for its NEEDED and registration:" >&2
    echo "$out" >&2
    exit 1
  fi
  echo "link-ohos: and it fails a library with no NEEDED that registers nothing (the stub libhilog_ndk.z.so)"
fi

if [[ "$INSTALL" == 1 ]]; then
  dest="$ROOT/ets/libs/arm64-v8a/librum_native.so"
  mkdir -p "$(dirname "$dest")"
  cp "$OHOS_BUILT" "$dest"
  if [[ -n "$OHOS_STRIP" && -x "$OHOS_STRIP" ]]; then
    "$OHOS_STRIP" --strip-unneeded "$dest"
  elif command -v aarch64-linux-gnu-strip >/dev/null; then
    aarch64-linux-gnu-strip --strip-unneeded "$dest"
  fi
  echo "link-ohos: → ets/libs/arm64-v8a/librum_native.so ($(wc -c <"$dest" | tr -d ' ') bytes)"
fi
