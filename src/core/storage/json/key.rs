//! Map keys: serde_json writes only strings there, and quotes integers, finite floats, bools and
//! chars into strings; everything else is an error.

use serde::ser::{self, Error as _, Serialize};
use serde_json::Error;

use super::scalar::{write_int, write_str, FloatLike};

/// Map keys: strings, and what serde_json quotes into strings (integers, finite floats, bools,
/// chars, and any of them in a `Some`).
pub(super) struct KeySer<'a> {
    pub out: &'a mut Vec<u8>,
}

fn key_must_be_a_string() -> Error {
    Error::custom("key must be a string")
}

impl KeySer<'_> {
    /// As serde_json: a finite float in quotes; NaN and infinities are refused.
    fn quoted_float<F: Serialize + FloatLike>(self, v: F) -> Result<(), Error> {
        if !v.finite() {
            return Err(Error::custom("float key must be finite (got NaN or +/-inf)"));
        }
        self.out.push(b'"');
        serde_json::to_writer(&mut *self.out, &v)?;
        self.out.push(b'"');
        Ok(())
    }

    fn quoted(self, v: impl itoa::Integer) -> Result<(), Error> {
        self.out.push(b'"');
        write_int(self.out, v);
        self.out.push(b'"');
        Ok(())
    }
}

impl ser::Serializer for KeySer<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = ser::Impossible<(), Error>;
    type SerializeTuple = ser::Impossible<(), Error>;
    type SerializeTupleStruct = ser::Impossible<(), Error>;
    type SerializeTupleVariant = ser::Impossible<(), Error>;
    type SerializeMap = ser::Impossible<(), Error>;
    type SerializeStruct = ser::Impossible<(), Error>;
    type SerializeStructVariant = ser::Impossible<(), Error>;

    fn serialize_str(self, v: &str) -> Result<(), Error> {
        write_str(self.out, v);
        Ok(())
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        write_str(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }
    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.out.extend_from_slice(if v { b"\"true\"" } else { b"\"false\"" });
        Ok(())
    }
    integers!(quoted);
    fn serialize_unit_variant(self, _name: &'static str, _index: u32, variant: &'static str) -> Result<(), Error> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        self.quoted_float(v)
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        self.quoted_float(v)
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_none(self) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple_struct(self, _name: &'static str, _len: usize) -> Result<Self::SerializeTupleStruct, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Self::SerializeStruct, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(key_must_be_a_string())
    }
}
