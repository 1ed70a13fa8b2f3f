//! The binding's message codecs, so that tonic frames, compresses and limits the messages while
//! one method table (through the messages' ProtoJSON form) serves all three bindings: the
//! server reads a request as a [`DynamicMessage`] of the RPC's input type and writes an answer
//! already encoded ([`Encoded`], made by `transcode`); [`DynamicCodec`] reads and writes
//! `DynamicMessage`s, as a client without generated code does.

use bytes::BufMut;
use prost::Message;
use prost_reflect::{DynamicMessage, MessageDescriptor};
use tonic::Status;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

use crate::bindings::grpc::status::status;
use crate::error::ApiError;

/// Decodes messages of one type and encodes messages of any: an RPC's request and response.
#[derive(Debug, Clone)]
pub struct DynamicCodec {
    decodes: MessageDescriptor,
}

impl DynamicCodec {
    /// A codec whose decoded messages are of type `decodes` (the request of the RPC served, or
    /// the response of the RPC called).
    pub fn new(decodes: MessageDescriptor) -> Self {
        DynamicCodec { decodes }
    }
}

impl Codec for DynamicCodec {
    type Encode = DynamicMessage;
    type Decode = DynamicMessage;
    type Encoder = DynamicEncoder;
    type Decoder = DynamicDecoder;

    fn encoder(&mut self) -> Self::Encoder {
        DynamicEncoder
    }

    fn decoder(&mut self) -> Self::Decoder {
        DynamicDecoder(self.decodes.clone())
    }
}

/// Writes a message's protobuf bytes.
#[derive(Debug)]
pub struct DynamicEncoder;

impl Encoder for DynamicEncoder {
    type Item = DynamicMessage;
    type Error = Status;

    fn encode(&mut self, item: DynamicMessage, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        // The buffer grows as needed, so encoding cannot run out of room.
        item.encode(dst)
            .map_err(|e| Status::internal(format!("a message could not be encoded: {e}")))
    }
}

/// Reads one message of its type; bytes that are not one (nesting deeper than the decoder's
/// limit of 100 messages included) are the client's error, `INVALID_ARGUMENT` with the A2A
/// `ErrorInfo`.
#[derive(Debug)]
pub struct DynamicDecoder(MessageDescriptor);

impl Decoder for DynamicDecoder {
    type Item = DynamicMessage;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<DynamicMessage>, Status> {
        DynamicMessage::decode(self.0.clone(), src)
            .map(Some)
            .map_err(|e| {
                let error = ApiError::InvalidParams(format!(
                    "the message is not a valid {}: {e}",
                    self.0.full_name()
                ));
                status(&error, "-", None)
            })
    }
}

/// A message already written as its protobuf bytes.
#[derive(Debug, Clone)]
pub struct Encoded(pub Vec<u8>);

/// The server's codec: requests read as `DynamicMessage`s of the RPC's input type, answers
/// written as the bytes they already are.
#[derive(Debug, Clone)]
pub struct ServerCodec {
    decodes: MessageDescriptor,
}

impl ServerCodec {
    /// A codec reading requests of type `decodes`.
    pub fn new(decodes: MessageDescriptor) -> Self {
        ServerCodec { decodes }
    }
}

impl Codec for ServerCodec {
    type Encode = Encoded;
    type Decode = DynamicMessage;
    type Encoder = EncodedEncoder;
    type Decoder = DynamicDecoder;

    fn encoder(&mut self) -> Self::Encoder {
        EncodedEncoder
    }

    fn decoder(&mut self) -> Self::Decoder {
        DynamicDecoder(self.decodes.clone())
    }
}

/// Writes bytes already encoded.
#[derive(Debug)]
pub struct EncodedEncoder;

impl Encoder for EncodedEncoder {
    type Item = Encoded;
    type Error = Status;

    fn encode(&mut self, item: Encoded, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put_slice(&item.0);
        Ok(())
    }
}
