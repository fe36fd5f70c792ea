//! Prints the `RumPipeline` class of `index.d.ts` from the one list of its methods
//! (`src/interface.rs`): `scripts/gen-dts.sh` puts it among napi-derive's definitions.

fn main() {
    println!("{}", rum_native::interface::pipeline_class_dts());
}
