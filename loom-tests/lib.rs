//! loom model checks of crew's protocols live in `tests/`; run them with
//! `RUSTFLAGS="--cfg loom" cargo test --release -p crew-loom-tests` (see README.md here).
//! Without `--cfg loom` this crate builds nothing.
