//! Compiles the gRPC binding's protocol definitions (`proto/`, see its README) into one encoded
//! `FileDescriptorSet` with a pure-Rust protobuf compiler, so a build needs nothing but Rust.
//! The server reads its messages through it (`bindings::grpc::schema`) and serves it to gRPC
//! reflection.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    let mut compiler = protox::Compiler::new(["proto"])?;
    compiler.include_imports(true).include_source_info(false);
    compiler.open_file("a2a.proto")?;
    let out = PathBuf::from(std::env::var("OUT_DIR")?).join("a2a_descriptor_set.bin");
    std::fs::write(out, compiler.encode_file_descriptor_set())?;
    Ok(())
}
