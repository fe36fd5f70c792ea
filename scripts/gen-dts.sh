#!/usr/bin/env bash
# Builds the release library with napi-derive's type definitions on, and writes the HAR's
# index.d.ts from them. `--check` fails instead of writing when the committed file is stale.
set -euo pipefail
cd "$(dirname "$0")/.."
out=ets/src/main/cpp/types/librum_native/index.d.ts
defs=target/typedef
rm -rf "$defs" && mkdir -p "$defs"
# The macros write definitions only when they expand: make cargo recompile the binding.
touch src/napi/*.rs
NAPI_TYPE_DEF_TMP_FOLDER="$PWD/$defs" cargo build --release --lib 2>&1 | grep -v '^\s*$' | tail -n 3
file=$(ls "$defs"/* | head -n 1)
# The union types (action types, error sources, ...) come from the Rust lists, not a copy.
unions=target/ts-unions.d.ts
cargo run --quiet --no-default-features --example ts_unions >"$unions"
# The RumPipeline class comes from the one list of its methods (src/interface.rs).
class=target/ts-class.d.ts
cargo run --quiet --no-default-features --example ts_class >"$class"
mkdir -p "$(dirname "$out")"
node scripts/gen-dts.mjs "$file" "$unions" "$class" "$out" "${1:-}"
