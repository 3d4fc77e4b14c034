//! Files and directories (the `fs` feature): tokio's `fs` shape with futures-io's traits, on
//! crew's blocking pool, so that a task reads a config file or writes an upload without blocking
//! its worker. See docs/fs-process.md for the differences from tokio's.
//!
//! Invariants (each file states its own in full):
//! - **One job per call** (`ops.rs`, `open_options.rs`): each free function and `open` is std's
//!   call, run as one job on the blocking pool ([`spawn_blocking`](crate::spawn_blocking)), with
//!   std's effects and errors.
//! - **A file runs one job at a time** (`file.rs`), in the order of its operations; it reads
//!   ahead ([`DEFAULT_READ_AHEAD`]) and writes behind, and its cursor never moves but where its
//!   reader, writer or seek put it (`buf.rs`).
//! - **A directory is read in batches** (`read_dir.rs`) of 32 entries a job.
//! - A paused pool's clock counts a file system job as the pool's work while it runs, as every
//!   blocking job (docs/testing.md): a timer does not fire past a read still in flight.
//!
//! # Examples
//!
//! ```
//! use crew::fs;
//! use crew::io::{AsyncBufReadExt, BufReader};
//! use futures_lite::StreamExt;
//!
//! let dir = std::env::temp_dir().join(format!("crew-fs-module-doc-{}", std::process::id()));
//! crew::block_on(async {
//!     fs::create_dir_all(&dir).await?;
//!     fs::write(dir.join("config.toml"), "workers = 4\nname = \"api\"\n").await?;
//!
//!     let file = fs::File::open(dir.join("config.toml")).await?;
//!     let lines: Vec<String> = BufReader::new(file).lines().try_collect().await?;
//!     assert_eq!(lines, ["workers = 4", "name = \"api\""]);
//!
//!     fs::remove_dir_all(&dir).await
//! })
//! .unwrap();
//! ```

mod background;
mod buf;
mod file;
mod open_options;
mod ops;
mod pipeline;
mod read_dir;

pub use file::{File, DEFAULT_READ_AHEAD};
pub use open_options::OpenOptions;
#[cfg(unix)]
pub use ops::symlink;
pub use ops::{
    canonicalize, copy, create_dir, create_dir_all, hard_link, metadata, read, read_link, read_to_string, remove_dir,
    remove_dir_all, remove_file, rename, set_permissions, symlink_metadata, try_exists, write,
};
pub use read_dir::{read_dir, DirEntry, ReadDir};
