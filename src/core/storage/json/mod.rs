//! The writer thread's JSON serializer: a `serde::Serializer` that writes the same bytes as
//! `serde_json::to_writer` (compact form), faster for documents.
//!
//! Why it exists: in a burst the writer spent most of its time in serde_json's string escaping,
//! which looks at one byte at a time, and an action document is mostly one long attribute string
//! (`benches/writer.rs`). Here strings are scanned eight bytes at a time and copied in runs, and
//! numbers are written with `itoa`. Floats go through serde_json itself (rare in documents, and
//! its shortest-representation output is the one to match). Documents keep a single definition of
//! their format — their `Serialize` impls — which `serde_json::to_value` also uses for the event
//! mapper; the tests below hold this serializer byte-for-byte to serde_json's.
//!
//! `scalar.rs` writes strings and numbers, `key.rs` map keys; this file is the serializer and its
//! compound forms (sequences, maps, structs).

#[macro_use]
mod scalar;
mod key;

use serde::ser::{self, Serialize};

use crate::core::attrs::RAW_JSON_TOKEN;
use key::KeySer;
use scalar::{write_int, write_str, FloatLike};

/// serde_json's error type, so callers see one kind of error whichever serializer ran.
pub type Error = serde_json::Error;

/// Appends the compact JSON of `value` to `out` (no trailing newline).
pub fn to_writer<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result<(), Error> {
    value.serialize(&mut Ser { out, raw: false })
}

struct Ser<'a> {
    out: &'a mut Vec<u8>,
    /// The next string is raw JSON text (serde_json's raw value: captured attributes), copied as
    /// it is.
    raw: bool,
}

impl Ser<'_> {
    fn write_int_into(&mut self, v: impl itoa::Integer) -> Result<(), Error> {
        write_int(self.out, v);
        Ok(())
    }

    fn write_float<F: Serialize + FloatLike>(&mut self, v: F) -> Result<(), Error> {
        if v.finite() {
            serde_json::to_writer(&mut *self.out, &v)
        } else {
            self.out.extend_from_slice(b"null"); // as serde_json: JSON has no NaN or Infinity
            Ok(())
        }
    }
}

/// A sequence or map being written; `first` decides the comma.
struct Compound<'s, 'a> {
    ser: &'s mut Ser<'a>,
    first: bool,
    /// `}` to add after the closing bracket: the wrapper object of an enum variant.
    variant: bool,
    /// A raw value's wrapper (serde_json's token): no brackets, its one field is the text.
    raw: bool,
}

impl<'s, 'a> Compound<'s, 'a> {
    fn open(ser: &'s mut Ser<'a>, bracket: u8, variant: Option<&str>) -> Self {
        if let Some(name) = variant {
            ser.out.push(b'{');
            write_str(ser.out, name);
            ser.out.push(b':');
        }
        ser.out.push(bracket);
        Compound { ser, first: true, variant: variant.is_some(), raw: false }
    }

    fn comma(&mut self) {
        if !self.first {
            self.ser.out.push(b',');
        }
        self.first = false;
    }

    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.comma();
        value.serialize(&mut *self.ser)
    }

    fn entry<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<(), Error> {
        self.comma();
        write_str(self.ser.out, key);
        self.ser.out.push(b':');
        value.serialize(&mut *self.ser)
    }

    fn close(self, bracket: u8) -> Result<(), Error> {
        if self.raw {
            return Ok(());
        }
        self.ser.out.push(bracket);
        if self.variant {
            self.ser.out.push(b'}');
        }
        Ok(())
    }
}

impl<'s, 'a> ser::Serializer for &'s mut Ser<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'s, 'a>;
    type SerializeTuple = Compound<'s, 'a>;
    type SerializeTupleStruct = Compound<'s, 'a>;
    type SerializeTupleVariant = Compound<'s, 'a>;
    type SerializeMap = Compound<'s, 'a>;
    type SerializeStruct = Compound<'s, 'a>;
    type SerializeStructVariant = Compound<'s, 'a>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.out.extend_from_slice(if v { b"true" } else { b"false" });
        Ok(())
    }
    integers!(write_int_into);
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        self.write_float(v)
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        self.write_float(v)
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        write_str(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        if std::mem::take(&mut self.raw) {
            self.out.extend_from_slice(v.as_bytes());
        } else {
            write_str(self.out, v);
        }
        Ok(())
    }
    /// As serde_json: an array of numbers.
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        let mut seq = Compound::open(self, b'[', None);
        for b in v {
            seq.element(b)?;
        }
        seq.close(b']')
    }
    fn serialize_none(self) -> Result<(), Error> {
        self.serialize_unit()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(self, _name: &'static str, _index: u32, variant: &'static str) -> Result<(), Error> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        let mut map = Compound::open(self, b'{', None);
        map.entry(variant, value)?;
        map.close(b'}')
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Compound<'s, 'a>, Error> {
        Ok(Compound::open(self, b'[', None))
    }
    fn serialize_tuple(self, _len: usize) -> Result<Compound<'s, 'a>, Error> {
        Ok(Compound::open(self, b'[', None))
    }
    fn serialize_tuple_struct(self, _name: &'static str, _len: usize) -> Result<Compound<'s, 'a>, Error> {
        Ok(Compound::open(self, b'[', None))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'s, 'a>, Error> {
        Ok(Compound::open(self, b'[', Some(variant)))
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Compound<'s, 'a>, Error> {
        Ok(Compound::open(self, b'{', None))
    }
    fn serialize_struct(self, name: &'static str, _len: usize) -> Result<Compound<'s, 'a>, Error> {
        if name == RAW_JSON_TOKEN {
            return Ok(Compound { ser: self, first: true, variant: false, raw: true });
        }
        Ok(Compound::open(self, b'{', None))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'s, 'a>, Error> {
        Ok(Compound::open(self, b'{', Some(variant)))
    }
}

/// The four sequence forms: elements, then `]`.
macro_rules! sequence {
    ($($form:ident :: $method:ident),*) => {$(
        impl ser::$form for Compound<'_, '_> {
            type Ok = ();
            type Error = Error;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
                self.element(value)
            }
            fn end(self) -> Result<(), Error> {
                self.close(b']')
            }
        }
    )*};
}

sequence!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.comma();
        key.serialize(KeySer { out: self.ser.out })?;
        self.ser.out.push(b':');
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        value.serialize(&mut *self.ser)
    }
    fn end(self) -> Result<(), Error> {
        self.close(b'}')
    }
}

/// Structs and struct variants: named fields, then `}`.
macro_rules! structure {
    ($($form:ident),*) => {$(
        impl ser::$form for Compound<'_, '_> {
            type Ok = ();
            type Error = Error;
            fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Error> {
                if self.raw {
                    self.ser.raw = true;
                    return value.serialize(&mut *self.ser);
                }
                self.entry(key, value)
            }
            fn end(self) -> Result<(), Error> {
                self.close(b'}')
            }
        }
    )*};
}

structure!(SerializeStruct, SerializeStructVariant);

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;
    use serde::Serialize;
    use serde_json::{json, Value};

    use super::*;

    fn ours<T: Serialize + ?Sized>(v: &T) -> String {
        let mut out = Vec::new();
        to_writer(&mut out, v).expect("serializes");
        String::from_utf8(out).expect("utf-8")
    }

    fn theirs<T: Serialize + ?Sized>(v: &T) -> String {
        serde_json::to_string(v).expect("serializes")
    }

    #[test]
    fn every_byte_below_0x80_is_escaped_as_serde_json_does() {
        for b in 0u8..0x80 {
            let s = format!("ab{}cdefghijklmnop{}", b as char, b as char);
            assert_eq!(ours(&s), theirs(&s), "byte {b:#04x}");
        }
    }

    #[test]
    fn numbers_floats_and_non_finite_values_match() {
        let values = json!([0, -1, i64::MIN, i64::MAX, u64::MAX, 0.5, -1.25e-7, 1e300, 3.0, f64::MIN_POSITIVE]);
        assert_eq!(ours(&values), theirs(&values));
        for v in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(ours(&v), "null");
            assert_eq!(ours(&v), theirs(&v));
        }
        assert_eq!(ours(&[1.5f32, f32::NAN]), theirs(&[1.5f32, f32::NAN]));
        assert_eq!(ours(&(u128::MAX, i128::MIN)), theirs(&(u128::MAX, i128::MIN)));
    }

    #[derive(Serialize)]
    enum Shape {
        Unit,
        Newtype(u8),
        Tuple(u8, &'static str),
        Struct { a: Option<u8>, b: char },
    }

    #[derive(Serialize)]
    struct Record {
        name: &'static str,
        shapes: Vec<Shape>,
        bytes: &'static [u8],
        unit: (),
        keys: BTreeMap<u32, bool>,
        bool_keys: BTreeMap<bool, ()>,
        char_keys: BTreeMap<char, i8>,
    }

    #[test]
    fn derived_structs_enums_and_non_string_keys_match() {
        let r = Record {
            name: "r\u{e9}cord \"1\"",
            shapes: vec![Shape::Unit, Shape::Newtype(7), Shape::Tuple(1, "x"), Shape::Struct { a: None, b: '\n' }],
            bytes: b"\x00\xff",
            unit: (),
            keys: BTreeMap::from([(1, true), (20, false)]),
            bool_keys: BTreeMap::from([(false, ()), (true, ())]),
            char_keys: BTreeMap::from([('"', -1)]),
        };
        assert_eq!(ours(&r), theirs(&r));
    }

    #[test]
    fn raw_bytes_are_an_array_of_numbers_as_in_serde_json() {
        use serde::Serializer as _;
        let mut theirs = Vec::new();
        serde_json::Serializer::new(&mut theirs).serialize_bytes(b"\x00a\xff").expect("serializes");
        let mut ours = Vec::new();
        (&mut Ser { out: &mut ours, raw: false }).serialize_bytes(b"\x00a\xff").expect("serializes");
        assert_eq!(ours, theirs);
    }

    /// A map whose keys are floats and options, which no derived type in the crate writes.
    struct OddKeys(Vec<(f64, Option<&'static str>)>);

    impl Serialize for OddKeys {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeMap;
            let mut m = s.serialize_map(None)?;
            for (f, o) in &self.0 {
                m.serialize_entry(f, o)?;
                m.serialize_entry(o, f)?;
            }
            m.end()
        }
    }

    #[test]
    fn float_and_option_keys_match_serde_json() {
        let keys = OddKeys(vec![(1.5, Some("a")), (-0.0, Some("b\"")), (1e300, Some("c"))]);
        assert_eq!(ours(&keys), theirs(&keys));
        let nan = OddKeys(vec![(f64::NAN, Some("a"))]);
        assert!(to_writer(&mut Vec::new(), &nan).is_err());
        assert!(serde_json::to_string(&nan).is_err());
    }

    #[test]
    fn keys_that_are_not_strings_fail_as_in_serde_json() {
        let m = BTreeMap::from([(vec![1u8], 1)]);
        assert!(to_writer(&mut Vec::new(), &m).is_err());
        assert!(serde_json::to_string(&m).is_err());
    }

    fn any_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            ".*".prop_map(Value::from),
            "[\\x00-\\x7f]{0,40}".prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::btree_map(".{0,12}", inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn any_value_serializes_byte_for_byte_as_serde_json(v in any_value()) {
            prop_assert_eq!(ours(&v), theirs(&v));
        }

        #[test]
        fn any_string_serializes_byte_for_byte_as_serde_json(s in "(.|[\\x00-\\x1f\"\\\\]){0,80}") {
            prop_assert_eq!(ours(&s), theirs(&s));
        }
    }
}
