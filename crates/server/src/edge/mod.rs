//! The edge: what stands between a socket and a binding. The accept loop and its connection
//! limits ([`serve`]), per-core serving threads, lingering closes, the body deadline, the
//! guard's load shedding and failed-token budget, and the loopback check of auth-off mode.

pub(crate) mod body_deadline;
pub(crate) mod guard;
pub(crate) mod huge_pages;
pub(crate) mod linger;
pub(crate) mod loopback;
pub(crate) mod serve;
pub(crate) mod serving_threads;
