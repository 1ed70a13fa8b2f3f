//! Whether the process may back its memory with transparent huge pages (THP).
//!
//! The memory task store grows by about one task per `message/send`. With THP, the allocator
//! asks the kernel for 2 MiB pages, and the first touch of each clears all 2 MiB at once inside
//! one request: under a `message/send` load that clearing was 8–12 % of the server's CPU and
//! the stalls behind its tail latency, against under 1 % with 4 KiB pages (BENCHMARKS.md,
//! "Huge pages"). The server turns THP off for itself at start unless
//! `server.transparent_huge_pages` asks for it; the machine's setting is left alone.

/// Turns transparent huge pages off for this process (and the processes it starts), unless
/// `allowed`. Linux only; elsewhere there is nothing to turn off.
pub fn apply(allowed: bool) -> std::io::Result<()> {
    if allowed {
        return Ok(());
    }
    disable()
}

#[cfg(target_os = "linux")]
fn disable() -> std::io::Result<()> {
    nix::sys::prctl::set_thp_disable(true).map_err(std::io::Error::from)
}

#[cfg(not(target_os = "linux"))]
fn disable() -> std::io::Result<()> {
    Ok(())
}
