#!/usr/bin/env bash
# Checks a librum_native.so linked for HarmonyOS and prints what it verified:
#   1. an ELF shared object for the ABI's machine (AArch64 for arm64-v8a, X86-64 for x86_64);
#   2. NEEDED is exactly libace_napi.z.so, libhilog_ndk.z.so and libc.so;
#   3. every undefined dynamic symbol is exported by one of them, per the NDK's export lists in
#      scripts/ohos-ndk/ (the .so is bound at load: one missing symbol fails the import on the phone);
#   4. it registers itself: napi_module_register is imported, and a function of .init_array calls it
#      (directly or through one call), which is how `import rum from 'librum_native.so'` finds it;
#   5. its size, and its size stripped of what the loader does not need.
# It also prints the imports the lists mark with the API level that introduced them.
#
#   scripts/check-ohos-lib.sh <librum_native.so> [arm64-v8a|x86_64]     (default arm64-v8a)
#
# Uses readelf, and objdump and strip for the ABI's machine (binutils, binutils-aarch64-linux-gnu),
# installed from apt when missing. Exit status: 0 when every check passed, 1 when one failed, 2 on
# bad arguments or a missing tool.
set -euo pipefail
export LC_ALL=C # one collation for sort, comm and join

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LIB="${1:-}"
ABI="${2:-arm64-v8a}"
# OHOS_NDK_LISTS: another folder of export lists (scripts/link-ohos.sh checks this check with one).
NDK_LISTS="${OHOS_NDK_LISTS:-$ROOT/scripts/ohos-ndk}"
NEEDED_EXPECTED="libace_napi.z.so libc.so libhilog_ndk.z.so"

usage() {
  echo "check-ohos-lib: $1" >&2
  echo "  usage: scripts/check-ohos-lib.sh <librum_native.so> [arm64-v8a|x86_64]" >&2
  exit 2
}
[[ -n "$LIB" ]] || usage "which library? (e.g. target/ohos-link/cargo/aarch64-unknown-linux-ohos/release/librum_native.so)"
[[ -f "$LIB" ]] || usage "$LIB is not a file"
case "$ABI" in
  arm64-v8a) MACHINE=AArch64 BINUTILS_PREFIX=aarch64-linux-gnu- BINUTILS_PKG=binutils-aarch64-linux-gnu ;;
  x86_64) MACHINE="Advanced Micro Devices X86-64" BINUTILS_PREFIX="" BINUTILS_PKG=binutils ;;
  *) usage "unknown ABI $ABI (arm64-v8a, x86_64)" ;;
esac

need_tool() {
  command -v "$1" >/dev/null 2>&1 && return 0
  echo "check-ohos-lib: installing $2 (apt) for $1"
  if [[ "$(id -u)" == 0 ]]; then
    apt-get update -qq && apt-get install -y -qq "$2"
  else
    sudo apt-get update -qq && sudo apt-get install -y -qq "$2"
  fi
  command -v "$1" >/dev/null 2>&1 || usage "$1 is missing and apt could not install $2"
}
need_tool readelf binutils
OBJDUMP="${BINUTILS_PREFIX}objdump"
STRIP="${BINUTILS_PREFIX}strip"
need_tool "$OBJDUMP" "$BINUTILS_PKG"
need_tool "$STRIP" "$BINUTILS_PKG"

FAILED=0
pass() { echo "  ok    $*"; }
fail() {
  echo "  FAIL  $*"
  FAILED=1
}
# `cmd` output, or the failure of cmd recorded (never a silent empty string).
run() {
  "$@" 2>/dev/null || {
    echo "check-ohos-lib: $* failed on $LIB" >&2
    exit 1
  }
}

echo "check-ohos-lib: $LIB ($ABI)"

# 1. the ELF header
header="$(run readelf -hW "$LIB")"
type="$(awk -F: '/^ *Type:/ { sub(/^ */, "", $2); print $2 }' <<<"$header")"
machine="$(awk -F: '/^ *Machine:/ { sub(/^ */, "", $2); print $2 }' <<<"$header")"
class="$(awk -F: '/^ *Class:/ { sub(/^ */, "", $2); print $2 }' <<<"$header")"
if [[ "$class" == ELF64 && "$type" == DYN* && "$machine" == "$MACHINE" ]]; then
  pass "ELF: $class, $type, machine $machine"
else
  fail "ELF: expected ELF64, DYN (shared object), machine $MACHINE; found $class, $type, machine $machine"
fi

# 2. NEEDED
dynamic="$(run readelf -dW "$LIB")"
needed="$(sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p' <<<"$dynamic" | sort | tr '\n' ' ' | sed 's/ $//')"
if [[ "$needed" == "$NEEDED_EXPECTED" ]]; then
  pass "NEEDED: $needed"
else
  fail "NEEDED: expected exactly $NEEDED_EXPECTED; found ${needed:-nothing}"
fi

# 3. undefined symbols against the export lists
list_names() { awk '!/^#/ && NF { print $1 }' "$1" | sort -u; }
for list in libace_napi.z libhilog_ndk.z libc; do
  [[ -s "$NDK_LISTS/$list.txt" ]] || usage "no export list $NDK_LISTS/$list.txt"
done
napi_list="$(list_names "$NDK_LISTS/libace_napi.z.txt")"
hilog_list="$(list_names "$NDK_LISTS/libhilog_ndk.z.txt")"
libc_list="$(list_names "$NDK_LISTS/libc.txt")"
dynsyms="$(run readelf --dyn-syms -W "$LIB")"
# Num: Value Size Type Bind Vis Ndx Name[@version]
undefined="$(awk '$7 == "UND" && $8 != "" { sub(/@.*/, "", $8); print $8 }' <<<"$dynsyms" | sort -u)"
from_napi="$(comm -12 <(echo "$undefined") <(echo "$napi_list"))"
from_hilog="$(comm -12 <(echo "$undefined") <(echo "$hilog_list"))"
from_libc="$(comm -12 <(echo "$undefined") <(echo "$libc_list"))"
unlisted="$(comm -23 <(echo "$undefined") <(printf '%s\n%s\n%s\n' "$napi_list" "$hilog_list" "$libc_list" | sort -u))"
count() {
  if [[ -z "$1" ]]; then echo 0; else wc -l <<<"$1" | tr -d ' '; fi
}
total="$(count "$undefined")"
if [[ "$total" == 0 ]]; then
  fail "imports: none found (readelf --dyn-syms listed no undefined symbol)"
elif [[ -z "$unlisted" ]]; then
  pass "imports: all $total undefined symbols are in the NDK's export lists:" \
    "$(count "$from_napi") from libace_napi.z.so, $(count "$from_hilog") from libhilog_ndk.z.so, $(count "$from_libc") from libc.so"
else
  fail "imports: $(count "$unlisted") of $total undefined symbols are in none of the NDK's export lists (${NDK_LISTS#"$ROOT/"}):"
  sed 's/^/          /' <<<"$unlisted"
fi
show() {
  echo "        $1 ($(count "$2")):"
  [[ -n "$2" ]] && tr '\n' ' ' <<<"$2" | fold -s -w 90 | sed 's/ *$//; s/^/          /' && echo
  return 0
}
show libace_napi.z.so "$from_napi"
show libhilog_ndk.z.so "$from_hilog"
show libc.so "$from_libc"
# The API level each import needs, where the lists mark one (since=N: the source's first_introduced).
since="$(cat "$NDK_LISTS"/libace_napi.z.txt "$NDK_LISTS"/libhilog_ndk.z.txt "$NDK_LISTS"/libc.txt |
  awk '!/^#/ { for (i = 2; i <= NF; i++) if ($i ~ /^since=/) print $1, substr($i, 7) }' | sort -k1,1 -u |
  join - <(echo "$undefined") | sort -k2,2n -k1,1)"
if [[ -n "$since" ]]; then
  echo "        imports marked with the API level that introduced them: $(awk '{ printf "%s%s (API %s)", sep, $1, $2; sep = ", " }' <<<"$since")"
else
  echo "        no import is marked with the API level that introduced it"
fi

# 4. registration: napi_module_register imported and called from an .init_array function
registers=0
if ! grep -qx napi_module_register <<<"$undefined"; then
  fail "registration: napi_module_register is not imported"
else
  relocs="$(run readelf -rW "$LIB")"
  sections="$(run readelf -SW "$LIB")"
  # [Nr] Name Type Address Off Size ...: the section's address and size
  read -r init_addr init_size < <(awk '{ for (i = 1; i <= NF; i++) if ($i == ".init_array") { print $(i + 2), $(i + 4); exit } }' <<<"$sections") || true
  if [[ -z "${init_addr:-}" ]]; then
    fail "registration: no .init_array section (nothing runs when the library is loaded)"
  else
    # Each slot is filled by a relocation whose addend is the function's address.
    entries=()
    for ((off = 0; off < 16#$init_size; off += 8)); do
      slot="$(printf '%x' $((16#$init_addr + off)))"
      target="$(awk -v s="$slot" '{ a = $1; sub(/^0+/, "", a) } a == s { print $NF; exit }' <<<"$relocs")"
      [[ -n "$target" ]] && entries+=("$target")
    done
    # Function bounds from the unwind tables (the library has no symbol table): pc=start..end.
    fdes="$(run readelf --debug-dump=frames "$LIB" | sed -n 's/.* FDE .*pc=\([0-9a-f]*\)\.\.\([0-9a-f]*\).*/\1 \2/p')"
    function_end() { awk -v s="$1" '{ a = $1; sub(/^0+/, "", a) } a == s { print $2; exit }' <<<"$fdes"; }
    calls_of() {
      local end
      end="$(function_end "$1")"
      [[ -n "$end" ]] || return 0
      "$OBJDUMP" -d --no-show-raw-insn --start-address="0x$1" --stop-address="0x$end" "$LIB" 2>/dev/null |
        awk '$2 == "bl" || $2 == "call" || $2 == "callq" || $2 == "b" || $2 == "jmp" { print $3, $4 }'
    }
    found=""
    for entry in "${entries[@]}"; do
      entry="${entry#0x}"
      direct="$(calls_of "$entry")"
      if grep -q '<napi_module_register@plt>' <<<"$direct"; then
        found="$entry"
        break
      fi
      for callee in $(awk '{ print $1 }' <<<"$direct" | sort -u); do
        if calls_of "${callee#0x}" | grep -q '<napi_module_register@plt>'; then
          found="$entry (through $callee)"
          break 2
        fi
      done
    done
    if [[ -n "$found" ]]; then
      registers=1
      pass "registration: napi_module_register imported; .init_array has ${#entries[@]} entries, the one at 0x$found calls it"
    else
      fail "registration: napi_module_register is imported, but none of the ${#entries[@]} .init_array functions calls it"
    fi
  fi
fi

# 5. size
stripped="$(mktemp "${TMPDIR:-/tmp}/librum_native.stripped.XXXXXX")"
trap 'rm -f "$stripped"' EXIT
run "$STRIP" --strip-unneeded -o "$stripped" "$LIB" >/dev/null
size_of() { wc -c <"$1" | tr -d ' '; }
pass "size: $(size_of "$LIB") bytes as linked, $(size_of "$stripped") bytes stripped (--strip-unneeded)"

if [[ "$FAILED" == 0 && "$registers" == 1 ]]; then
  echo "PASS ohos-lib: $LIB"
else
  echo "FAIL ohos-lib: $LIB"
  exit 1
fi
