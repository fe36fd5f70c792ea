//! Closed sets of JS strings (action types, error sources, consents, ...): one macro declares the
//! Rust enum, its parse for the binding, its text for documents, and the list `index.d.ts`'s union
//! type is generated from.

/// Declares a closed set of JS strings: `parse` for the binding, `as_str` for documents, and the
/// list `ALL` that `index.d.ts`'s union type of the same name is generated from
/// ([`ts_unions`](super::event::ts_unions)).
macro_rules! js_enum {
    ($(#[$doc:meta])* $name:ident { $($variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name { $($variant),+ }

        impl $name {
            pub const ALL: &'static [&'static str] = &[$($text),+];

            pub fn parse(s: &str) -> Option<Self> {
                match s { $($text => Some(Self::$variant),)+ _ => None }
            }

            pub fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $text),+ }
            }
        }

        impl $crate::core::js_enum::JsEnum for $name {
            const TS_NAME: &'static str = stringify!($name);
            const ALL: &'static [&'static str] = &[$($text),+];
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }
    };
}

pub(crate) use js_enum;

/// What `index.d.ts`'s union type of a closed set is made from.
pub trait JsEnum {
    /// The type's name in `index.d.ts`.
    const TS_NAME: &'static str;
    /// Its values, in order.
    const ALL: &'static [&'static str];
}

/// `/** doc */ export type Name = 'a' | 'b' | ...` for one set.
pub fn ts_union<T: JsEnum>(doc: &str) -> String {
    let values: Vec<String> = T::ALL.iter().map(|v| format!("'{v}'")).collect();
    format!("/** {doc} */\nexport type {} = {}\n", T::TS_NAME, values.join(" | "))
}
