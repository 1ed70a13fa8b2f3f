//! The `magisterium-a2a` binary.

/// mimalloc: a request allocates and frees dozens of small buffers, and glibc's allocator spent
/// a quarter of the instructions of a `message/send` on them (bench/profile).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    magisterium_a2a::cli::main()
}
