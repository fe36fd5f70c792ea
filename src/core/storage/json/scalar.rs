//! The leaves of the writer's JSON: strings (escaped as serde_json escapes them, eight bytes at
//! a time: `core::json_text`, shared with the binding's capture), integers (`itoa`), and what the
//! serializers share about floats.

pub(super) use crate::core::json_text::write_str;

pub(super) fn write_int(out: &mut Vec<u8>, v: impl itoa::Integer) {
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// `serialize_i8` … `serialize_u128`, each handing its value to `self.$write(v)`.
macro_rules! integers {
    ($write:ident) => {
        integers!($write: i8 serialize_i8, i16 serialize_i16, i32 serialize_i32, i64 serialize_i64,
            i128 serialize_i128, u8 serialize_u8, u16 serialize_u16, u32 serialize_u32,
            u64 serialize_u64, u128 serialize_u128);
    };
    ($write:ident: $($t:ident $method:ident),*) => {$(
        fn $method(self, v: $t) -> Result<(), Error> {
            self.$write(v)
        }
    )*};
}

pub(super) trait FloatLike: Copy {
    fn finite(self) -> bool;
}

impl FloatLike for f32 {
    fn finite(self) -> bool {
        self.is_finite()
    }
}

impl FloatLike for f64 {
    fn finite(self) -> bool {
        self.is_finite()
    }
}
