//! The `magisterium-a2a` binary.

fn main() -> std::process::ExitCode {
    magisterium_a2a::cli::main()
}
