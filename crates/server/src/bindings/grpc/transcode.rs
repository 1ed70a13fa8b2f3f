//! A rendered 1.0 answer (ProtoJSON) written straight as the protobuf bytes of its message, in
//! one walk of the JSON with the message's descriptor beside it. Building a `DynamicMessage`
//! first and encoding it costs far more: the message is built field by field, and its encoding
//! computes the length of each nested message again at every level above it, which a task's
//! data part (a `google.protobuf.Struct` several levels deep) makes dear. Here each nested
//! message is written once into a buffer of its own and then copied behind its length.
//!
//! The mapping is ProtoJSON's (what `schema::from_json` reads): fields by their JSON or proto
//! name, members the message has no field for left out, `null` as the field's default (a
//! `google.protobuf.Value`'s `null_value`), enums by name or number, 64-bit integers as numbers
//! or strings, bytes as base64, and the well-known `Struct`, `Value`, `ListValue`, `Timestamp`
//! and `Empty` in their JSON forms.

use base64::Engine;
use prost::encoding::{WireType, encode_key, encode_varint};
use prost_reflect::{FieldDescriptor, Kind, MessageDescriptor};
use serde_json::{Map, Value};

/// Why an answer does not fit its message.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {reason}")]
pub(crate) struct Misfit {
    path: String,
    reason: String,
}

fn misfit(path: &str, reason: impl Into<String>) -> Misfit {
    Misfit {
        path: path.to_string(),
        reason: reason.into(),
    }
}

/// The protobuf bytes of `json` as a message of type `message`.
pub(crate) fn encode(json: &Value, message: &MessageDescriptor) -> Result<Vec<u8>, Misfit> {
    let mut out = Vec::with_capacity(256);
    message_body(json, message, &mut out, message.name())?;
    Ok(out)
}

/// The fields of one message (no length prefix).
fn message_body(
    json: &Value,
    message: &MessageDescriptor,
    out: &mut Vec<u8>,
    path: &str,
) -> Result<(), Misfit> {
    match message.full_name() {
        "google.protobuf.Struct" => return struct_body(json, out, path),
        "google.protobuf.Value" => return value_body(json, out, path),
        "google.protobuf.ListValue" => return list_body(json, out, path),
        "google.protobuf.Timestamp" => return timestamp_body(json, out, path),
        _ => {}
    }
    let Value::Object(members) = json else {
        return Err(misfit(path, "an object was expected"));
    };
    for (name, value) in members {
        let Some(field) = message
            .get_field_by_json_name(name)
            .or_else(|| message.get_field_by_name(name))
        else {
            continue;
        };
        let path = format!("{path}.{name}");
        if value.is_null() && !is_value_message(&field) {
            continue;
        }
        if field.is_map() {
            map_field(&field, value, out, &path)?;
        } else if field.is_list() {
            let Value::Array(items) = value else {
                return Err(misfit(&path, "an array was expected"));
            };
            for item in items {
                single(&field, item, out, &path)?;
            }
        } else {
            single(&field, value, out, &path)?;
        }
    }
    Ok(())
}

fn is_value_message(field: &FieldDescriptor) -> bool {
    matches!(field.kind(), Kind::Message(m) if m.full_name() == "google.protobuf.Value")
}

/// One value of a field, with its key.
fn single(
    field: &FieldDescriptor,
    value: &Value,
    out: &mut Vec<u8>,
    path: &str,
) -> Result<(), Misfit> {
    let number = field.number();
    match field.kind() {
        Kind::Message(message) => {
            let mut body = Vec::new();
            message_body(value, &message, &mut body, path)?;
            length_delimited(number, &body, out);
        }
        Kind::String => {
            let text = value
                .as_str()
                .ok_or_else(|| misfit(path, "a string was expected"))?;
            length_delimited(number, text.as_bytes(), out);
        }
        Kind::Bytes => {
            let text = value
                .as_str()
                .ok_or_else(|| misfit(path, "base64 text was expected"))?;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(text)
                .or_else(|_| base64::engine::general_purpose::URL_SAFE.decode(text))
                .map_err(|_| misfit(path, "the bytes are not base64"))?;
            length_delimited(number, &bytes, out);
        }
        Kind::Bool => {
            let flag = value
                .as_bool()
                .ok_or_else(|| misfit(path, "true or false was expected"))?;
            varint_field(number, u64::from(flag), out);
        }
        Kind::Enum(enumeration) => {
            let value_number = match value {
                Value::String(name) => enumeration
                    .get_value_by_name(name)
                    .map(|v| v.number())
                    .ok_or_else(|| misfit(path, format!("{name} is not a value of the enum")))?,
                other => whole(other, path)? as i32,
            };
            varint_field(number, i64::from(value_number) as u64, out);
        }
        Kind::Double => fixed64(number, float(value, path)?.to_bits(), out),
        Kind::Float => fixed32(number, (float(value, path)? as f32).to_bits(), out),
        Kind::Int32 | Kind::Int64 | Kind::Uint32 | Kind::Uint64 => {
            varint_field(number, whole(value, path)? as u64, out);
        }
        Kind::Sint32 | Kind::Sint64 => {
            let n = whole(value, path)?;
            varint_field(number, ((n << 1) ^ (n >> 63)) as u64, out);
        }
        Kind::Fixed32 | Kind::Sfixed32 => fixed32(number, whole(value, path)? as u32, out),
        Kind::Fixed64 | Kind::Sfixed64 => fixed64(number, whole(value, path)? as u64, out),
    }
    Ok(())
}

/// A map field: one entry message (key 1, value 2) per member.
fn map_field(
    field: &FieldDescriptor,
    value: &Value,
    out: &mut Vec<u8>,
    path: &str,
) -> Result<(), Misfit> {
    let Value::Object(members) = value else {
        return Err(misfit(path, "an object was expected"));
    };
    let Kind::Message(entry) = field.kind() else {
        return Err(misfit(path, "a map without an entry message"));
    };
    let key = entry.map_entry_key_field();
    let value_field = entry.map_entry_value_field();
    for (name, item) in members {
        let mut body = Vec::new();
        let key_json = match key.kind() {
            Kind::String => Value::String(name.clone()),
            Kind::Bool => Value::Bool(name == "true"),
            _ => Value::String(name.clone()),
        };
        single(&key, &key_json, &mut body, path)?;
        if !item.is_null() || is_value_message(&value_field) {
            single(&value_field, item, &mut body, &format!("{path}.{name}"))?;
        }
        length_delimited(field.number(), &body, out);
    }
    Ok(())
}

/// `google.protobuf.Struct`: `map<string, Value> fields = 1`.
fn struct_body(json: &Value, out: &mut Vec<u8>, path: &str) -> Result<(), Misfit> {
    let Value::Object(members) = json else {
        return Err(misfit(path, "an object was expected"));
    };
    struct_members(members, out, path)
}

fn struct_members(
    members: &Map<String, Value>,
    out: &mut Vec<u8>,
    path: &str,
) -> Result<(), Misfit> {
    for (name, item) in members {
        let mut entry = Vec::new();
        length_delimited(1, name.as_bytes(), &mut entry);
        let mut value = Vec::new();
        value_body(item, &mut value, &format!("{path}.{name}"))?;
        length_delimited(2, &value, &mut entry);
        length_delimited(1, &entry, out);
    }
    Ok(())
}

/// `google.protobuf.Value`: null 1, number 2, string 3, bool 4, struct 5, list 6.
fn value_body(json: &Value, out: &mut Vec<u8>, path: &str) -> Result<(), Misfit> {
    match json {
        Value::Null => varint_field(1, 0, out),
        Value::Number(n) => fixed64(2, n.as_f64().unwrap_or_default().to_bits(), out),
        Value::String(text) => length_delimited(3, text.as_bytes(), out),
        Value::Bool(flag) => varint_field(4, u64::from(*flag), out),
        Value::Object(members) => {
            let mut body = Vec::new();
            struct_members(members, &mut body, path)?;
            length_delimited(5, &body, out);
        }
        Value::Array(_) => {
            let mut body = Vec::new();
            list_body(json, &mut body, path)?;
            length_delimited(6, &body, out);
        }
    }
    Ok(())
}

/// `google.protobuf.ListValue`: `repeated Value values = 1`.
fn list_body(json: &Value, out: &mut Vec<u8>, path: &str) -> Result<(), Misfit> {
    let Value::Array(items) = json else {
        return Err(misfit(path, "an array was expected"));
    };
    for (index, item) in items.iter().enumerate() {
        let mut value = Vec::new();
        value_body(item, &mut value, &format!("{path}[{index}]"))?;
        length_delimited(1, &value, out);
    }
    Ok(())
}

/// `google.protobuf.Timestamp` from its RFC 3339 text: seconds 1, nanos 2.
fn timestamp_body(json: &Value, out: &mut Vec<u8>, path: &str) -> Result<(), Misfit> {
    let text = json
        .as_str()
        .ok_or_else(|| misfit(path, "an RFC 3339 time was expected"))?;
    let time = chrono::DateTime::parse_from_rfc3339(text)
        .map_err(|_| misfit(path, format!("{text} is not an RFC 3339 time")))?;
    let (seconds, nanos) = (time.timestamp(), time.timestamp_subsec_nanos());
    if seconds != 0 {
        varint_field(1, seconds as u64, out);
    }
    if nanos != 0 {
        varint_field(2, u64::from(nanos), out);
    }
    Ok(())
}

fn float(value: &Value, path: &str) -> Result<f64, Misfit> {
    match value {
        Value::Number(n) => n.as_f64().ok_or_else(|| misfit(path, "not a number")),
        Value::String(text) => match text.as_str() {
            "NaN" => Ok(f64::NAN),
            "Infinity" => Ok(f64::INFINITY),
            "-Infinity" => Ok(f64::NEG_INFINITY),
            other => other
                .parse()
                .map_err(|_| misfit(path, "a number was expected")),
        },
        _ => Err(misfit(path, "a number was expected")),
    }
}

/// A whole number, from a JSON number or its text (ProtoJSON writes 64-bit integers as text).
fn whole(value: &Value, path: &str) -> Result<i64, Misfit> {
    match value {
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_u64().map(|u| u as i64))
            .ok_or_else(|| misfit(path, "a whole number was expected")),
        Value::String(text) => text
            .parse::<i64>()
            .or_else(|_| text.parse::<u64>().map(|u| u as i64))
            .map_err(|_| misfit(path, "a whole number was expected")),
        _ => Err(misfit(path, "a whole number was expected")),
    }
}

fn length_delimited(number: u32, bytes: &[u8], out: &mut Vec<u8>) {
    encode_key(number, WireType::LengthDelimited, out);
    encode_varint(bytes.len() as u64, out);
    out.extend_from_slice(bytes);
}

fn varint_field(number: u32, value: u64, out: &mut Vec<u8>) {
    encode_key(number, WireType::Varint, out);
    encode_varint(value, out);
}

fn fixed32(number: u32, value: u32, out: &mut Vec<u8>) {
    encode_key(number, WireType::ThirtyTwoBit, out);
    out.extend_from_slice(&value.to_le_bytes());
}

fn fixed64(number: u32, value: u64, out: &mut Vec<u8>) {
    encode_key(number, WireType::SixtyFourBit, out);
    out.extend_from_slice(&value.to_le_bytes());
}
