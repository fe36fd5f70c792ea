# shellcheck shell=bash
# shellcheck disable=SC2034,SC2153 # sets OHOS_BUILT and OHOS_STRIP for its callers, which set OHOS_LOG
# The cross build of release librum_native.so for HarmonyOS, written once and sourced by
# scripts/build-ohos.sh (the NDK, every ABI, then the HAR and HAP) and scripts/link-ohos.sh (the
# link check CI runs). Two toolchains:
#
#   the NDK      OHOS_NDK_HOME set: its clang links (--target=<arch>-linux-ohos, its sysroot) and
#                its libraries are linked against; cargo uses rustup's std for the target (stable), or
#                builds it with nightly when rustup cannot fetch it.
#   stand-ins    OHOS_NDK_HOME unset (arm64-v8a only): zig's linker (PyPI package ziglang) for
#                aarch64-linux-musl, whose musl provides libc.so (HarmonyOS' libc is musl), and stub
#                libace_napi.z.so / libhilog_ndk.z.so generated from the NDK's export lists in
#                scripts/ohos-ndk/; cargo +nightly builds std from source (-Zbuild-std), as
#                scripts/check-ohos.sh does, since the OHOS std is not fetched from rustup there.
#
# Either way scripts/check-ohos-lib.sh then checks what was linked against those export lists.
# Callers set ROOT (the repository) and OHOS_LOG (the prefix of messages); `ohos_build <abi>` sets
# OHOS_BUILT to the built library and OHOS_STRIP to a strip tool for it. A missing tool stops the
# caller with exit status 2 and says where to get it.

OHOS_ZIG_VERSION=0.15.2
OHOS_LINK_DIR="$ROOT/target/ohos-link"

ohos_missing() {
  echo "$OHOS_LOG: $1" >&2
  shift
  local line
  for line in "$@"; do
    echo "  $line" >&2
  done
  exit 2
}

ohos_triple_of() {
  case "$1" in
    arm64-v8a) echo aarch64-unknown-linux-ohos ;;
    x86_64) echo x86_64-unknown-linux-ohos ;;
    *) ohos_missing "unknown ABI $1 (arm64-v8a, x86_64)" ;;
  esac
}

ohos_clang_target_of() {
  case "$1" in
    arm64-v8a) echo aarch64-linux-ohos ;;
    x86_64) echo x86_64-linux-ohos ;;
    *) ohos_missing "unknown ABI $1 (arm64-v8a, x86_64)" ;;
  esac
}

# apt-get install, as root or through sudo (scripts/test.sh's `need` does the same).
ohos_apt_install() {
  echo "$OHOS_LOG: installing $* (apt)"
  if [[ "$(id -u)" == 0 ]]; then
    apt-get update -qq && apt-get install -y -qq "$@"
  else
    sudo apt-get update -qq && sudo apt-get install -y -qq "$@"
  fi
}

# The nightly toolchain with rust-src, for -Zbuild-std (scripts/check-ohos.sh uses it too).
ohos_need_nightly_std() {
  command -v rustup >/dev/null || ohos_missing "rustup is not on the PATH." "Install Rust with rustup (https://rustup.rs)."
  if ! rustup toolchain list | grep -q '^nightly'; then
    echo "$OHOS_LOG: installing the nightly toolchain (rustup, minimal profile)"
    rustup toolchain install nightly --profile minimal --component rust-src ||
      ohos_missing "could not install the nightly toolchain." "Run: rustup toolchain install nightly --profile minimal --component rust-src"
  fi
  if ! rustup component list --toolchain nightly --installed | grep -q '^rust-src'; then
    echo "$OHOS_LOG: installing rust-src for the nightly toolchain"
    rustup component add rust-src --toolchain nightly ||
      ohos_missing "could not add rust-src." "Run: rustup component add rust-src --toolchain nightly"
  fi
}

# ---- the NDK ----
ohos_setup_ndk() {
  local abi="$1" clang sysroot triple clang_target wrapper
  clang="$OHOS_NDK_HOME/native/llvm/bin/clang"
  sysroot="$OHOS_NDK_HOME/native/sysroot"
  [[ -x "$clang" ]] || ohos_missing "no clang at $clang." \
    "OHOS_NDK_HOME must be the SDK folder that contains native/llvm/bin/clang (sdk/default/openharmony)."
  [[ -d "$sysroot" ]] || ohos_missing "no sysroot at $sysroot (OHOS_NDK_HOME must contain native/sysroot)."
  command -v rustup >/dev/null || ohos_missing "rustup is not on the PATH." "The OHOS targets are installed with rustup (https://rustup.rs)."
  triple="$(ohos_triple_of "$abi")"
  clang_target="$(ohos_clang_target_of "$abi")"
  OHOS_CARGO=(cargo)
  if ! rustup target list --installed | grep -qx "$triple"; then
    echo "$OHOS_LOG: adding the Rust target $triple"
    if ! rustup target add "$triple"; then
      # No prebuilt std to be had (offline, or a mirror without it): build it from source.
      rustup component list --toolchain nightly --installed 2>/dev/null | grep -q '^rust-src' ||
        ohos_missing "rustup could not add $triple." \
          "Run: rustup target add $triple (the OHOS targets ship with stable Rust since 1.78)," \
          "or install nightly with rust-src to build its std from source:" \
          "  rustup toolchain install nightly --profile minimal --component rust-src"
      echo "$OHOS_LOG: no prebuilt std for $triple: nightly cargo builds it from source (-Zbuild-std)"
      OHOS_CARGO=(cargo +nightly '-Zbuild-std=std,panic_abort')
    fi
  fi
  mkdir -p "$ROOT/target/ohos-linker"
  wrapper="$ROOT/target/ohos-linker/$clang_target-clang.sh"
  # The linker: the NDK's clang for this target, its sysroot, and musl's headers.
  cat >"$wrapper" <<WRAPPER
#!/bin/sh
exec "$clang" --target=$clang_target --sysroot="$sysroot" -D__MUSL__ "\$@"
WRAPPER
  chmod +x "$wrapper"
  OHOS_LINKER="$wrapper"
  OHOS_AR="$OHOS_NDK_HOME/native/llvm/bin/llvm-ar"
  OHOS_STRIP="$OHOS_NDK_HOME/native/llvm/bin/llvm-strip"
  OHOS_NDK_FOR_BUILD="$OHOS_NDK_HOME"
  OHOS_CARGO_TARGET_DIR="$ROOT/target"
}

# ---- the stand-ins ----

# zig from PyPI's ziglang wheel (the wheel carries the zig binary and its libc sources), kept in
# target/ohos-link so it is installed once.
ohos_need_zig() {
  local dir="$OHOS_LINK_DIR/ziglang-$OHOS_ZIG_VERSION"
  OHOS_ZIG="$dir/ziglang/zig"
  [[ -x "$OHOS_ZIG" ]] && return 0
  command -v python3 >/dev/null || ohos_apt_install python3
  python3 -m pip --version >/dev/null 2>&1 || ohos_apt_install python3-pip
  echo "$OHOS_LOG: installing zig $OHOS_ZIG_VERSION (pip install ziglang==$OHOS_ZIG_VERSION into ${dir#"$ROOT/"})"
  rm -rf "$dir.partial"
  # --target installs into a plain folder: no virtualenv, no user or system site touched.
  PIP_ROOT_USER_ACTION=ignore python3 -m pip install --disable-pip-version-check --no-warn-script-location -q \
    --target "$dir.partial" "ziglang==$OHOS_ZIG_VERSION" ||
    ohos_missing "pip could not install ziglang==$OHOS_ZIG_VERSION." \
      "Run: python3 -m pip install --target $dir ziglang==$OHOS_ZIG_VERSION"
  [[ -x "$dir.partial/ziglang/zig" ]] || ohos_missing "the ziglang wheel has no ziglang/zig executable (in $dir.partial)."
  rm -rf "$dir"
  mv "$dir.partial" "$dir"
}

# A stub shared library exporting every name of an export list: a `ret` per function, 8 zero bytes
# per variable. Linking against it records the SONAME as NEEDED, as the NDK's own stubs do.
ohos_stub_library() {
  local list="$1" soname="$2" out_dir="$3" zig_target="$4" src
  [[ -f "$list" ]] || ohos_missing "no export list $list."
  if [[ -f "$out_dir/$soname" && "$out_dir/$soname" -nt "$list" ]]; then
    return 0
  fi
  src="$OHOS_LINK_DIR/stubs/${soname%.so}.S"
  mkdir -p "$(dirname "$src")" "$out_dir"
  awk '
    /^#/ || NF == 0 { next }
    $1 !~ /^[A-Za-z_][A-Za-z0-9_]*$/ { printf "bad symbol name %s at line %d\n", $1, NR > "/dev/stderr"; exit 1 }
    $2 == "variable" { printf ".data\n.globl %s\n.type %s,%%object\n.size %s,8\n%s:\n.quad 0\n", $1, $1, $1, $1; next }
    { printf ".text\n.globl %s\n.type %s,%%function\n%s:\nret\n", $1, $1, $1 }
  ' "$list" >"$src" || ohos_missing "could not read the export list $list."
  "$OHOS_ZIG" cc -target "$zig_target" -shared -nostdlib -Wl,-soname,"$soname" "$src" -o "$out_dir/$soname" ||
    ohos_missing "zig could not build the stub $soname from $list."
}

ohos_setup_standin() {
  local abi="$1" triple clang_target zig_target lib_dir wrapper
  [[ "$abi" == arm64-v8a ]] || ohos_missing "the stand-in toolchain links arm64-v8a only; set OHOS_NDK_HOME for $abi."
  triple="$(ohos_triple_of "$abi")"
  clang_target="$(ohos_clang_target_of "$abi")"
  zig_target=aarch64-linux-musl
  ohos_need_nightly_std
  ohos_need_zig
  export ZIG_GLOBAL_CACHE_DIR="$OHOS_LINK_DIR/zig-cache" ZIG_LOCAL_CACHE_DIR="$OHOS_LINK_DIR/zig-cache"
  # The layout napi-build-ohos expects under OHOS_NDK_HOME: it adds these link paths and -lace_napi.z.
  OHOS_NDK_FOR_BUILD="$OHOS_LINK_DIR/ndk"
  lib_dir="$OHOS_NDK_FOR_BUILD/native/sysroot/usr/lib/$clang_target"
  mkdir -p "$lib_dir" "$OHOS_NDK_FOR_BUILD/native/llvm/lib/$clang_target"
  ohos_stub_library "$ROOT/scripts/ohos-ndk/libace_napi.z.txt" libace_napi.z.so "$lib_dir" "$zig_target"
  ohos_stub_library "$ROOT/scripts/ohos-ndk/libhilog_ndk.z.txt" libhilog_ndk.z.so "$lib_dir" "$zig_target"
  mkdir -p "$OHOS_LINK_DIR/bin"
  wrapper="$OHOS_LINK_DIR/bin/$zig_target-cc"
  # rustc's linker: zig cc for the target. -Wl,-O1 is dropped (zig's lld warns that it ignores
  # it) and so are -L folders that do not exist (the stand-in has no llvm/lib, rustup no OHOS std).
  cat >"$wrapper" <<WRAPPER
#!/usr/bin/env bash
args=()
while ((\$#)); do
  case "\$1" in
    -L) if [[ -d "\${2-}" ]]; then args+=(-L "\$2"); fi; shift 2; continue ;;
    -Wl,-O1) ;;
    *) args+=("\$1") ;;
  esac
  shift
done
export ZIG_GLOBAL_CACHE_DIR="$ZIG_GLOBAL_CACHE_DIR" ZIG_LOCAL_CACHE_DIR="$ZIG_LOCAL_CACHE_DIR"
exec "$OHOS_ZIG" cc -target $zig_target "\${args[@]}"
WRAPPER
  chmod +x "$wrapper"
  OHOS_LINKER="$wrapper"
  OHOS_AR="$OHOS_LINK_DIR/bin/$zig_target-ar"
  printf '#!/bin/sh\nexec "%s" ar "$@"\n' "$OHOS_ZIG" >"$OHOS_AR"
  chmod +x "$OHOS_AR"
  OHOS_STRIP=""
  OHOS_CARGO=(cargo +nightly '-Zbuild-std=std,panic_abort')
  OHOS_CARGO_TARGET_DIR="$OHOS_LINK_DIR/cargo"
}

# Builds release librum_native.so for one ABI with the NDK when OHOS_NDK_HOME is set, else with the
# stand-ins; sets OHOS_BUILT.
ohos_build() {
  local abi="$1" triple env_triple cc_triple
  command -v cargo >/dev/null || ohos_missing "cargo is not on the PATH." "Install Rust with rustup (https://rustup.rs)."
  triple="$(ohos_triple_of "$abi")"
  if [[ -n "${OHOS_NDK_HOME:-}" ]]; then
    ohos_setup_ndk "$abi"
    OHOS_TOOLCHAIN="the NDK at $OHOS_NDK_HOME"
  else
    ohos_setup_standin "$abi"
    OHOS_TOOLCHAIN="stand-ins: zig $OHOS_ZIG_VERSION (PyPI ziglang), stubs from scripts/ohos-ndk"
  fi
  env_triple="$(echo "$triple" | tr 'a-z-' 'A-Z_')"
  cc_triple="${triple//-/_}"
  echo "== ${OHOS_CARGO[*]} build --release --lib --target $triple ($OHOS_TOOLCHAIN)"
  (
    cd "$ROOT"
    export "CARGO_TARGET_${env_triple}_LINKER=$OHOS_LINKER"
    export "CC_${cc_triple}=$OHOS_LINKER"
    export "AR_${cc_triple}=$OHOS_AR"
    export OHOS_NDK_HOME="$OHOS_NDK_FOR_BUILD"
    export CARGO_TARGET_DIR="$OHOS_CARGO_TARGET_DIR"
    "${OHOS_CARGO[@]}" build --release --lib --target "$triple"
  ) || {
    echo "$OHOS_LOG: cargo build failed for $triple" >&2
    exit 1
  }
  OHOS_BUILT="$OHOS_CARGO_TARGET_DIR/$triple/release/librum_native.so"
  [[ -f "$OHOS_BUILT" ]] || {
    echo "$OHOS_LOG: cargo did not produce $OHOS_BUILT" >&2
    exit 1
  }
}
