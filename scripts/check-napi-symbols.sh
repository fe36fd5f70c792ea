#!/usr/bin/env bash
# Checks that the built library imports only Node-API functions that HarmonyOS' libace_napi.z.so
# exports (scripts/ohos-ndk/libace_napi.z.txt, the NDK's export list). The .so is linked with
# immediate binding, so one missing symbol would make `import rum from 'librum_native.so'` fail on
# the phone. The host build is checked: it has the same imports as the OHOS build except what sits
# under cfg(target_env = "ohos"); scripts/link-ohos.sh checks the OHOS build itself.
#   scripts/check-napi-symbols.sh [path/to/librum_native.so]   (default: target/release)
set -euo pipefail
cd "$(dirname "$0")/.."
lib=${1:-target/release/librum_native.so}
[ -f "$lib" ] || { echo "check-napi-symbols: $lib not found (cargo build --release --lib)" >&2; exit 1; }
allowed=$(awk '!/^#/ && NF { print $1 }' scripts/ohos-ndk/libace_napi.z.txt)
imported=$(nm -D --undefined-only "$lib" | awk '{print $2}' | grep -E '^napi_' | sort -u)
missing=$(comm -23 <(echo "$imported") <(echo "$allowed" | sort -u))
if [ -n "$missing" ]; then
  echo "check-napi-symbols: $lib imports Node-API functions HarmonyOS does not export:" >&2
  echo "$missing" | sed 's/^/  /' >&2
  exit 1
fi
echo "check-napi-symbols: all $(echo "$imported" | wc -l) imported napi_* functions are exported by libace_napi.z.so"
