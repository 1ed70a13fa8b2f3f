//! The memory store's keys: 16 bytes for every id in the one form the server makes it (a UUID
//! it generated, a hash it printed), the exact text for any other. Each key stands for exactly
//! one text, so a lookup finds what a lookup by the text itself would have found: an uppercase
//! or braced spelling of a stored UUID is another key, and not found.

use sha2::{Digest as _, Sha256};

use crate::store::Owner;

/// 16 bytes: a UUID, or 128 bits of a hash.
pub(super) type Digest = [u8; 16];

/// An id as 16 bytes when it is in its packed form, else as its text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Packed {
    Bytes(Digest),
    Text(Box<str>),
}

/// A task id: a canonical UUID (lowercase, hyphenated, as the server makes every task id) in
/// 16 bytes; any other id, as a task saved by another component may carry, as its text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct PackedTaskKey(Packed);

impl PackedTaskKey {
    /// The key of a task id.
    pub(super) fn of(id: &str) -> Self {
        PackedTaskKey(match uuid_bytes(id) {
            Some(bytes) => Packed::Bytes(bytes),
            None => Packed::Text(id.into()),
        })
    }

    /// The key of a UUID's bytes.
    pub(super) fn uuid(bytes: Digest) -> Self {
        PackedTaskKey(Packed::Bytes(bytes))
    }

    /// The UUID's bytes, when the id is one.
    pub(super) fn uuid_bytes(&self) -> Option<Digest> {
        match &self.0 {
            Packed::Bytes(bytes) => Some(*bytes),
            Packed::Text(_) => None,
        }
    }

    /// The task id, as it was given.
    pub(super) fn id(&self) -> String {
        match &self.0 {
            Packed::Bytes(bytes) => uuid::Uuid::from_bytes(*bytes).hyphenated().to_string(),
            Packed::Text(text) => text.to_string(),
        }
    }
}

/// A message's idempotency key: the 32 hex digits [`message_key_hash`] prints, in 16 bytes; any
/// other key as its text.
///
/// [`message_key_hash`]: crate::store::message_key_hash
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct MessageKey(Packed);

impl MessageKey {
    /// The key of a message key.
    pub(super) fn of(key: &str) -> Self {
        MessageKey(match hex_bytes(key) {
            Some(bytes) => Packed::Bytes(bytes),
            None => Packed::Text(key.into()),
        })
    }
}

/// The owner's hash in 16 bytes. [`Owner::of`] prints 32 hex digits; an owner in any other
/// form (one read back from a shared store, never given to this one) is hashed after a NUL,
/// which no text `Owner::of` hashes begins with, so it meets no other owner.
pub(super) fn owner_digest(owner: &Owner) -> Digest {
    hex_bytes(owner.as_str()).unwrap_or_else(|| short_digest(&format!("\0{}", owner.as_str())))
}

/// A context id's key: the 16 bytes [`short_hash`] prints as hex.
///
/// [`short_hash`]: crate::store::short_hash
pub(super) fn short_digest(text: &str) -> Digest {
    let digest = Sha256::digest(text.as_bytes());
    let mut bytes = [0; 16];
    bytes.copy_from_slice(&digest[..16]);
    bytes
}

/// Reads exactly 32 lowercase hex digits (how `hex` prints); any other text is `None`.
pub(super) fn hex_bytes(text: &str) -> Option<Digest> {
    let text = text.as_bytes();
    if text.len() != 32 {
        return None;
    }
    let mut bytes = [0; 16];
    for (byte, pair) in bytes.iter_mut().zip(text.chunks_exact(2)) {
        *byte = hex_pair(pair[0], pair[1])?;
    }
    Some(bytes)
}

/// Reads a canonical UUID: 36 characters, lowercase hex digits in groups of 8-4-4-4-12 joined by
/// hyphens, the one form `Uuid::to_string` prints. Any other text is `None`.
fn uuid_bytes(text: &str) -> Option<Digest> {
    let text = text.as_bytes();
    if text.len() != 36 || [8, 13, 18, 23].iter().any(|&at| text[at] != b'-') {
        return None;
    }
    let mut bytes = [0; 16];
    let mut at = 0;
    for byte in &mut bytes {
        if text[at] == b'-' {
            at += 1;
        }
        *byte = hex_pair(text[at], text[at + 1])?;
        at += 2;
    }
    Some(bytes)
}

fn hex_pair(high: u8, low: u8) -> Option<u8> {
    Some(hex_digit(high)? << 4 | hex_digit(low)?)
}

fn hex_digit(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{message_key_hash, short_hash};

    #[test]
    fn a_canonical_uuid_is_packed_and_reads_back_the_same() {
        for _ in 0..100 {
            let id = uuid::Uuid::new_v4().to_string();
            let key = PackedTaskKey::of(&id);
            assert!(key.uuid_bytes().is_some(), "{id}");
            assert_eq!(key.id(), id);
            assert_eq!(PackedTaskKey::uuid(key.uuid_bytes().unwrap()), key);
        }
        let edge = "00000000-0000-0000-0000-000000000000";
        assert_eq!(PackedTaskKey::of(edge).id(), edge);
        let edge = "ffffffff-ffff-ffff-ffff-ffffffffffff";
        assert_eq!(PackedTaskKey::of(edge).id(), edge);
    }

    #[test]
    fn any_other_spelling_of_a_uuid_is_another_key() {
        let id = uuid::Uuid::new_v4().to_string();
        let key = PackedTaskKey::of(&id);
        let simple = id.replace('-', "");
        for other in [
            id.to_uppercase(),
            format!("{{{id}}}"),
            format!("urn:uuid:{id}"),
            simple.clone(),
            format!("{id} "),
            id.replace('-', "_"),
            // A hyphen one place early.
            format!("{}-{}{}", &id[..7], &id[7..8], &id[9..]),
            format!("{}x", &id[..35]),
            format!("{}-", &id[..35]),
        ] {
            let other_key = PackedTaskKey::of(&other);
            assert_eq!(other_key.uuid_bytes(), None, "{other}");
            assert_ne!(other_key, key, "{other}");
            assert_eq!(other_key.id(), other, "kept as given");
        }
        // Multi-byte characters where a hyphen or digit belongs: not found, no panic.
        for odd in ["é".repeat(18), format!("{}é", &id[..34]), "-".repeat(36)] {
            assert_eq!(PackedTaskKey::of(&odd).uuid_bytes(), None, "{odd}");
            assert_eq!(PackedTaskKey::of(&odd).id(), odd);
        }
        assert_eq!(PackedTaskKey::of("t1"), PackedTaskKey::of("t1"));
        assert_ne!(PackedTaskKey::of("t1"), PackedTaskKey::of("T1"));
    }

    #[test]
    fn message_keys_and_owners_pack_as_the_server_prints_them() {
        let printed = message_key_hash("[{\"messageId\":\"m-1\"},null]");
        assert_eq!(
            MessageKey::of(&printed),
            MessageKey(Packed::Bytes(hex_bytes(&printed).unwrap()))
        );
        assert_eq!(hex::encode(hex_bytes(&printed).unwrap()), printed);
        assert_ne!(
            MessageKey::of(&printed.to_uppercase()),
            MessageKey::of(&printed)
        );
        assert_eq!(
            MessageKey::of("m-1"),
            MessageKey(Packed::Text("m-1".into()))
        );
        assert_eq!(hex_bytes(&short_hash("ctx")), Some(short_digest("ctx")));
        let owner = Owner::of("https://idp.example", "alice");
        assert_eq!(hex::encode(owner_digest(&owner)), owner.as_str());
        // An owner in another form meets no owner `Owner::of` makes.
        let odd = Owner::from_hash("0:alice");
        assert_ne!(owner_digest(&odd), owner_digest(&Owner::of("", "alice")));
        assert_eq!(
            owner_digest(&odd),
            owner_digest(&Owner::from_hash("0:alice"))
        );
    }
}
