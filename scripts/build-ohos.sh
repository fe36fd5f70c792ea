#!/usr/bin/env bash
# Builds rum-native for HarmonyOS devices and packages it:
#   1. cross-compiles release librum_native.so for each ABI with the NDK's clang
#        arm64-v8a → aarch64-unknown-linux-ohos (phones, tablets, 2in1)
#        x86_64    → x86_64-unknown-linux-ohos  (the emulator)
#      (scripts/ohos-cross.sh, the steps scripts/link-ohos.sh runs in CI), checks each library
#      (scripts/check-ohos-lib.sh, on Linux) and places it in ets/libs/<abi>/ (ignored by git);
#   2. regenerates the HAR's index.d.ts (scripts/gen-dts.sh, when present);
#   3. builds the HAR and the demo HAP with hvigorw (ohpm install first when ohpm is on the PATH).
#
#   OHOS_NDK_HOME=<sdk>/default/openharmony scripts/build-ohos.sh [--abi arm64-v8a|x86_64|all]
#                                                                 [--libs-only] [--debug-hap]
#
# OHOS_NDK_HOME is the SDK folder that contains native/ (native/llvm/bin/clang, native/sysroot):
# in DevEco Studio's or the Command Line Tools' SDK, sdk/default/openharmony. hvigorw needs the
# SDK root (the folder holding default/sdk-pkg.json) in DEVECO_SDK_HOME or in local.properties'
# sdk.dir; when neither is set, it is taken as the folder two levels above OHOS_NDK_HOME.
# Exit status: 0 on success; 2 when something it needs is missing (the message says what and
# where to get it); 3 when the libraries were built but hvigorw is not on the PATH.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ABIS="arm64-v8a x86_64"
LIBS_ONLY=0
HAP_MODE=release
while [[ $# -gt 0 ]]; do
  case "$1" in
    --abi)
      [[ $# -ge 2 ]] || { echo "build-ohos: --abi needs arm64-v8a, x86_64 or all" >&2; exit 2; }
      case "$2" in
        all) ABIS="arm64-v8a x86_64" ;;
        arm64-v8a | x86_64) ABIS="$2" ;;
        *) echo "build-ohos: unknown ABI $2 (arm64-v8a, x86_64, all)" >&2; exit 2 ;;
      esac
      shift 2
      ;;
    --libs-only) LIBS_ONLY=1; shift ;;
    --debug-hap) HAP_MODE=debug; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-ohos: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

missing() {
  echo "build-ohos: $1" >&2
  shift
  for line in "$@"; do
    echo "  $line" >&2
  done
  exit 2
}

# ---- what the cross build needs ----
if [[ -z "${OHOS_NDK_HOME:-}" ]]; then
  missing "OHOS_NDK_HOME is not set." \
    "Set it to the HarmonyOS SDK folder that contains native/, e.g." \
    "  export OHOS_NDK_HOME=\$HOME/command-line-tools/sdk/default/openharmony" \
    "The SDK comes with DevEco Studio or the Command Line Tools for HarmonyOS" \
    "(developer.huawei.com > DevEco Studio > Download; the Linux command-line tools suffice)."
fi
OHOS_LOG=build-ohos
# shellcheck source=scripts/ohos-cross.sh
source "$ROOT/scripts/ohos-cross.sh"

# ---- 1. cross-compile, check and place the libraries (scripts/ohos-cross.sh, the NDK) ----
for abi in $ABIS; do
  ohos_build "$abi"
  # What the phone will load: ELF, NEEDED, imports against the NDK's export lists, registration.
  # Linux only (binutils); elsewhere scripts/link-ohos.sh on a Linux machine checks the same.
  if [[ "$(uname -s)" == Linux ]]; then
    "$ROOT/scripts/check-ohos-lib.sh" "$OHOS_BUILT" "$abi"
  else
    echo "build-ohos: not on Linux, so scripts/check-ohos-lib.sh (binutils) did not check $OHOS_BUILT" >&2
  fi
  mkdir -p "$ROOT/ets/libs/$abi"
  cp "$OHOS_BUILT" "$ROOT/ets/libs/$abi/librum_native.so"
  if [[ -x "$OHOS_STRIP" ]]; then
    "$OHOS_STRIP" --strip-unneeded "$ROOT/ets/libs/$abi/librum_native.so"
  fi
  echo "   → ets/libs/$abi/librum_native.so ($(du -h "$ROOT/ets/libs/$abi/librum_native.so" | cut -f1))"
done

# ---- 2. the HAR's type definitions ----
# gen-dts.sh builds the host library and asks Node for its exports; DevEco ships a node but does
# not put it on the PATH, and the committed index.d.ts serves when it is missing.
if ! command -v node >/dev/null; then
  echo "build-ohos: node is not on the PATH, so index.d.ts was not regenerated: the committed one is used" >&2
  echo "  (scripts/gen-dts.sh --check on a machine with node says whether it matches the library)." >&2
elif [[ -f "$ROOT/scripts/gen-dts.sh" ]]; then
  echo "== scripts/gen-dts.sh (ets/src/main/cpp/types/librum_native/index.d.ts)"
  bash "$ROOT/scripts/gen-dts.sh"
fi

# ---- 3. the HAR and the HAP ----
if [[ "$LIBS_ONLY" == 1 ]]; then
  echo "build-ohos: libraries in ets/libs; --libs-only, so no hvigorw"
  exit 0
fi
if ! command -v hvigorw >/dev/null; then
  echo "build-ohos: the libraries are in ets/libs, but hvigorw is not on the PATH, so the HAR and HAP were not built." >&2
  echo "  hvigorw and ohpm come with DevEco Studio (tools/hvigor/bin, tools/ohpm/bin) or the Command Line" >&2
  echo "  Tools for HarmonyOS (command-line-tools/bin); add that folder to the PATH and run this again," >&2
  echo "  or open the project in DevEco Studio (Build > Build Hap(s)/APP(s))." >&2
  exit 3
fi
cd "$ROOT"
# hvigorw finds the SDK through DEVECO_SDK_HOME (the SDK root, parent of default/) or sdk.dir in
# local.properties; without either it stops before building anything.
if [[ -z "${DEVECO_SDK_HOME:-}" ]] && ! grep -qs '^sdk\.dir=' "$ROOT/local.properties"; then
  sdk_root="$(cd "$OHOS_NDK_HOME/../.." && pwd)"
  if [[ -f "$sdk_root/default/sdk-pkg.json" ]]; then
    export DEVECO_SDK_HOME="$sdk_root"
    echo "build-ohos: DEVECO_SDK_HOME=$DEVECO_SDK_HOME (from OHOS_NDK_HOME)"
  else
    missing "hvigorw needs the HarmonyOS SDK root, and $sdk_root has no default/sdk-pkg.json." \
      "Set DEVECO_SDK_HOME to the SDK folder that contains default/ (e.g. command-line-tools/sdk)," \
      "or write sdk.dir=<that folder> into local.properties at the project root."
  fi
fi
if command -v ohpm >/dev/null; then
  echo "== ohpm install --all"
  ohpm install --all
fi
echo "== hvigorw assembleHar (module rum_native)"
hvigorw assembleHar --mode module -p module=rum_native@default -p product=default -p buildMode=release --no-daemon
echo "== hvigorw assembleHap (module entry, $HAP_MODE)"
hvigorw assembleHap --mode module -p module=entry@default -p product=default -p buildMode="$HAP_MODE" --no-daemon
echo
echo "HAR: $(ls ets/build/default/outputs/default/*.har 2>/dev/null | tr '\n' ' ')"
echo "HAP: $(ls entry/build/default/outputs/default/*.hap 2>/dev/null | tr '\n' ' ')"
if ls entry/build/default/outputs/default/*-unsigned.hap >/dev/null 2>&1 &&
  ! ls entry/build/default/outputs/default/*-signed.hap >/dev/null 2>&1; then
  echo "build-ohos: the HAP is unsigned (build-profile.json5 has no signingConfigs), and hdc install refuses" >&2
  echo "  an unsigned HAP. In DevEco Studio: File > Project Structure > Signing Configs > Automatically" >&2
  echo "  generate signature (it writes signingConfigs into build-profile.json5), then run this again." >&2
fi
