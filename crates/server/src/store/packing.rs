//! The form a finished task is kept in: its JSON text, or that text compressed with zstd and a
//! dictionary trained on the skills' own tasks, marked by a format byte.
//!
//! Stored tasks are JSON with long repeated names (`"artifactId"`, `"parts"`, the skills' data
//! fields); compressed with the shipped dictionary they take a fifth to a ninth of the bytes
//! (BENCHMARKS.md, "Compressed stored tasks"). The form is told by the first byte: a task's JSON
//! always opens with `{`, a compressed task with [`ZSTD_TASKS_V1`]. Readers take both forms, so a
//! store written by an earlier release (plain JSON) is read as it is, and a release that writes
//! the compressed form can follow one that only reads it (`store.compressed_writes`).
//!
//! The dictionary is part of the format: a frame compressed with it cannot be read without it.
//! A new dictionary takes a new format byte, and readers keep the old one.

use std::cell::RefCell;
use std::sync::LazyLock;

use bytes::Bytes;
use zstd::bulk::{Compressor, Decompressor};
use zstd::dict::{DecoderDictionary, EncoderDictionary};

use super::StoreError;

/// The format byte of a task compressed with zstd and [`DICTIONARY_V1`].
pub(crate) const ZSTD_TASKS_V1: u8 = 0x01;

/// The dictionary of [`ZSTD_TASKS_V1`], trained by `scripts/train-task-dictionary` on tasks of
/// all five skills made by this server.
static DICTIONARY_V1: &[u8] = include_bytes!("tasks-v1.zdict");

/// zstd's default level: at level 1 the tasks are 5–20 % larger for a third less time, at 6
/// 3–10 % smaller for three times the time.
const LEVEL: i32 = 3;

/// The largest task a frame may claim to hold: Redis' own limit on a value. A frame claiming more
/// is corrupt, and is refused before anything is allocated for it.
const MAX_UNPACKED_BYTES: usize = 512 * 1024 * 1024;

static ENCODER_V1: LazyLock<EncoderDictionary<'static>> =
    LazyLock::new(|| EncoderDictionary::copy(DICTIONARY_V1, LEVEL));
static DECODER_V1: LazyLock<DecoderDictionary<'static>> =
    LazyLock::new(|| DecoderDictionary::copy(DICTIONARY_V1));

/// Scratch space of a thread's compressor beyond which it is given back after use: most tasks
/// are a few kilobytes, the largest allowed a megabyte.
const SCRATCH_KEPT_BYTES: usize = 256 * 1024;

/// A thread's compressor and the buffer it compresses into, so that packing a task allocates
/// only the packed task.
struct Packer {
    compressor: Compressor<'static>,
    scratch: Vec<u8>,
}

thread_local! {
    // A zstd context per thread: making one costs more than compressing a small task.
    static PACKER: RefCell<Option<Packer>> = const { RefCell::new(None) };
    static DECOMPRESSOR: RefCell<Option<Decompressor<'static>>> = const { RefCell::new(None) };
}

/// The stored form of a task's JSON text: compressed with the format byte in front, in an
/// allocation of its own size (a stored task keeps it for its whole TTL).
pub(crate) fn pack(json: &[u8]) -> Result<Bytes, StoreError> {
    PACKER.with(|cell| {
        let mut slot = cell.borrow_mut();
        let packer = match slot.as_mut() {
            Some(packer) => packer,
            None => slot.insert(Packer {
                compressor: Compressor::with_prepared_dictionary(&ENCODER_V1)
                    .map_err(zstd_error)?,
                scratch: Vec::new(),
            }),
        };
        packer.scratch.clear();
        packer
            .scratch
            .reserve(zstd::zstd_safe::compress_bound(json.len()));
        let written = packer
            .compressor
            .compress_to_buffer(json, &mut packer.scratch)
            .map_err(zstd_error)?;
        let mut packed = Vec::with_capacity(written + 1);
        packed.push(ZSTD_TASKS_V1);
        packed.extend_from_slice(&packer.scratch[..written]);
        if packer.scratch.capacity() > SCRATCH_KEPT_BYTES {
            packer.scratch = Vec::new();
        }
        Ok(Bytes::from(packed))
    })
}

/// A stored task's JSON text, from either form. Plain JSON is handed back as it is, without a
/// copy.
pub(crate) fn unpack(stored: Bytes) -> Result<Bytes, StoreError> {
    match stored.first() {
        Some(&ZSTD_TASKS_V1) => unpack_zstd_v1(&stored[1..]).map(Bytes::from),
        Some(b'{') => Ok(stored),
        Some(other) => Err(StoreError::Corrupt(format!(
            "a stored task of unknown form {other:#04x}"
        ))),
        None => Err(StoreError::Corrupt("an empty stored task".into())),
    }
}

fn unpack_zstd_v1(frame: &[u8]) -> Result<Vec<u8>, StoreError> {
    let size = zstd::zstd_safe::get_frame_content_size(frame)
        .ok()
        .flatten()
        .and_then(|size| usize::try_from(size).ok())
        .filter(|size| *size <= MAX_UNPACKED_BYTES)
        .ok_or_else(|| StoreError::Corrupt("a compressed task without a valid size".into()))?;
    DECOMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        let decompressor = match slot.as_mut() {
            Some(decompressor) => decompressor,
            None => slot
                .insert(Decompressor::with_prepared_dictionary(&DECODER_V1).map_err(zstd_error)?),
        };
        decompressor.decompress(frame, size).map_err(zstd_error)
    })
}

fn zstd_error(error: std::io::Error) -> StoreError {
    StoreError::Corrupt(format!("zstd: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TASK: &[u8] = br#"{"id":"t-1","contextId":"c-1","kind":"task","status":{"state":"completed"},"artifacts":[{"artifactId":"a-1","parts":[{"kind":"text","text":"Grace is a supernatural gift of God."}]}]}"#;

    #[test]
    fn a_packed_task_unpacks_to_its_json_and_is_smaller() {
        let json = TASK.repeat(20);
        let packed = pack(&json).unwrap();
        assert_eq!(packed[0], ZSTD_TASKS_V1);
        assert!(
            packed.len() < json.len() / 4,
            "{} of {}",
            packed.len(),
            json.len()
        );
        assert_eq!(unpack(packed).unwrap(), Bytes::from(json));
    }

    #[test]
    fn plain_json_written_before_compression_is_read_as_it_is() {
        let stored = Bytes::from_static(TASK);
        assert_eq!(unpack(stored.clone()).unwrap(), stored);
    }

    #[test]
    fn unknown_forms_and_broken_frames_are_corrupt_not_a_panic() {
        for stored in [
            Bytes::new(),
            Bytes::from_static(b"\x02abc"),
            Bytes::from_static(b"\x01"),
            Bytes::from_static(b"\x01\x28\xb5\x2f\xfd\x00"),
        ] {
            assert!(matches!(unpack(stored), Err(StoreError::Corrupt(_))));
        }
        let mut packed = pack(TASK).unwrap().to_vec();
        let last = packed.len() - 1;
        packed[last] ^= 0xff;
        packed.truncate(packed.len() - 3);
        assert!(matches!(
            unpack(Bytes::from(packed)),
            Err(StoreError::Corrupt(_))
        ));
    }

    #[test]
    fn a_frame_claiming_more_than_a_redis_value_is_refused_before_allocating() {
        let mut packed = pack(TASK).unwrap().to_vec();
        // Frame header after the magic: a descriptor asking for an 8-byte content size.
        let mut forged = vec![ZSTD_TASKS_V1, 0x28, 0xb5, 0x2f, 0xfd, 0xc0];
        forged.extend_from_slice(&(u64::MAX / 2).to_le_bytes());
        forged.extend_from_slice(&packed.split_off(6));
        assert!(matches!(
            unpack(Bytes::from(forged)),
            Err(StoreError::Corrupt(_))
        ));
    }
}
