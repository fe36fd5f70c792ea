//! Prints the TypeScript unions of the interface's closed string sets (action types, error
//! sources, resource kinds, consents) from the Rust lists: `scripts/gen-dts.sh` puts them at the top
//! of `index.d.ts`.

fn main() {
    print!("{}", rum_native::core::event::ts_unions());
}
