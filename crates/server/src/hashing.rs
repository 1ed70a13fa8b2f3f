//! The hasher of in-process maps whose keys the server made itself (task ids it generated,
//! hashes of owners and messages, keyed hashes of tokens, its own enums): foldhash, several
//! times cheaper per lookup than the standard library's SipHash. A client cannot choose such
//! keys, so SipHash's resistance to chosen colliding keys buys nothing there; maps keyed by a
//! value a client chose (a `contextId`) keep the standard hasher.

/// Seeded per process from the address-space layout (without foldhash's `std` feature, so the
/// `hashbrown` that other dependencies build with foldhash is shared, not built twice).
pub type DerivedKeys = foldhash::fast::RandomState;
