//! The binding's message codec: protobuf bytes to and from a [`DynamicMessage`] of the type the
//! RPC names, so tonic frames, compresses and limits the messages while one method table
//! (through the messages' ProtoJSON form) serves all three bindings.

use prost::Message;
use prost_reflect::{DynamicMessage, MessageDescriptor};
use tonic::Status;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

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

/// Reads one message of its type; bytes that are not one are the client's error.
#[derive(Debug)]
pub struct DynamicDecoder(MessageDescriptor);

impl Decoder for DynamicDecoder {
    type Item = DynamicMessage;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<DynamicMessage>, Status> {
        DynamicMessage::decode(self.0.clone(), src)
            .map(Some)
            .map_err(|e| {
                Status::invalid_argument(format!(
                    "the message is not a valid {}: {e}",
                    self.0.full_name()
                ))
            })
    }
}
