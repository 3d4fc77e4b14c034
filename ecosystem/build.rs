//! `tests/tonic.rs`'s gRPC service, described in Rust with tonic-build's `manual` module: no
//! `.proto` file and no protoc. Its messages are prost derives in the test; the codec is
//! tonic-prost's. Writes `$OUT_DIR/crew.ecosystem.Echo.rs` (`echo_client`, `echo_server`).

use tonic_build::manual::{Builder, Method, Service};

fn method(name: &str, route: &str) -> tonic_build::manual::MethodBuilder {
    Method::builder()
        .name(name)
        .route_name(route)
        .input_type("crate::EchoRequest")
        .output_type("crate::EchoResponse")
        .codec_path("tonic_prost::ProstCodec")
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let echo = Service::builder()
        .name("Echo")
        .package("crew.ecosystem")
        .method(method("unary", "Unary").build())
        .method(method("bidi", "Bidi").client_streaming().server_streaming().build())
        .build();
    Builder::new().compile(&[echo]);
}
