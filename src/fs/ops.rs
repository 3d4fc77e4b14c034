//! The file system's one-call operations (`read`, `write`, `rename`, `metadata`, ...): each is
//! std's function, run as one job on crew's blocking pool.
//!
//! Invariants:
//! - Each operation is exactly std's call on the same arguments (owned copies of them), so its
//!   effects and its errors are std's; the caller's task waits for the job without blocking its
//!   worker.
//! - A future dropped before its job started cancels the job (the call never happens); dropped
//!   later, the call still runs to its end and its result is dropped.

use std::fs::{Metadata, Permissions};
use std::io;
use std::path::{Path, PathBuf};

/// Runs `call` on crew's blocking pool and waits for its result.
pub(crate) async fn asyncify<T: Send + 'static>(call: impl FnOnce() -> io::Result<T> + Send + 'static) -> io::Result<T> {
    crate::spawn_blocking(call).await
}

/// Reads the whole file at `path` (std's [`fs::read`](std::fs::read)).
///
/// # Errors
///
/// std's: `NotFound`, `PermissionDenied`, ...
///
/// # Examples
///
/// ```
/// let manifest = crew::block_on(crew::fs::read("Cargo.toml")).unwrap();
/// assert!(manifest.starts_with(b"[package]"));
/// ```
pub async fn read(path: impl AsRef<Path>) -> io::Result<Vec<u8>> {
    let path = path.as_ref().to_owned();
    asyncify(move || std::fs::read(path)).await
}

/// Reads the whole file at `path` as UTF-8 (std's [`fs::read_to_string`](std::fs::read_to_string)).
///
/// # Errors
///
/// std's; `InvalidData` if the file is not UTF-8.
///
/// # Examples
///
/// ```
/// let manifest = crew::block_on(crew::fs::read_to_string("Cargo.toml")).unwrap();
/// assert!(manifest.contains("name = \"crew\""));
/// ```
pub async fn read_to_string(path: impl AsRef<Path>) -> io::Result<String> {
    let path = path.as_ref().to_owned();
    asyncify(move || std::fs::read_to_string(path)).await
}

/// Writes `contents` as the whole file at `path`, made if missing, truncated if not (std's
/// [`fs::write`](std::fs::write)).
///
/// # Errors
///
/// std's.
///
/// # Examples
///
/// ```
/// let path = std::env::temp_dir().join(format!("crew-write-doc-{}", std::process::id()));
/// crew::block_on(async {
///     crew::fs::write(&path, "hello").await.unwrap();
///     assert_eq!(crew::fs::read(&path).await.unwrap(), b"hello");
///     crew::fs::remove_file(&path).await.unwrap();
/// });
/// ```
pub async fn write(path: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> io::Result<()> {
    let (path, contents) = (path.as_ref().to_owned(), contents.as_ref().to_owned());
    asyncify(move || std::fs::write(path, contents)).await
}

/// Copies the file `from` to `to`, with its permissions, and returns the bytes copied (std's
/// [`fs::copy`](std::fs::copy), which lets the kernel copy where it can).
///
/// # Errors
///
/// std's.
///
/// # Examples
///
/// ```
/// let path = std::env::temp_dir().join(format!("crew-copy-doc-{}", std::process::id()));
/// crew::block_on(async {
///     let copied = crew::fs::copy("Cargo.toml", &path).await.unwrap();
///     assert_eq!(copied, crew::fs::metadata("Cargo.toml").await.unwrap().len());
///     crew::fs::remove_file(&path).await.unwrap();
/// });
/// ```
pub async fn copy(from: impl AsRef<Path>, to: impl AsRef<Path>) -> io::Result<u64> {
    let (from, to) = (from.as_ref().to_owned(), to.as_ref().to_owned());
    asyncify(move || std::fs::copy(from, to)).await
}

/// Renames `from` to `to`, replacing `to` if it is a file (std's [`fs::rename`](std::fs::rename)).
///
/// # Errors
///
/// std's: `NotFound`, a rename across file systems (`CrossesDevices`), ...
///
/// # Examples
///
/// ```
/// let dir = std::env::temp_dir();
/// let (from, to) = (dir.join(format!("crew-rename-a-{}", std::process::id())), dir.join(format!("crew-rename-b-{}", std::process::id())));
/// crew::block_on(async {
///     crew::fs::write(&from, "x").await.unwrap();
///     crew::fs::rename(&from, &to).await.unwrap();
///     assert!(!crew::fs::try_exists(&from).await.unwrap());
///     crew::fs::remove_file(&to).await.unwrap();
/// });
/// ```
pub async fn rename(from: impl AsRef<Path>, to: impl AsRef<Path>) -> io::Result<()> {
    let (from, to) = (from.as_ref().to_owned(), to.as_ref().to_owned());
    asyncify(move || std::fs::rename(from, to)).await
}

/// Removes the file at `path` (std's [`fs::remove_file`](std::fs::remove_file)).
///
/// # Errors
///
/// std's: `NotFound`, a directory, ...
///
/// # Examples
///
/// ```
/// let missing = crew::block_on(crew::fs::remove_file("/no/such/file"));
/// assert_eq!(missing.unwrap_err().kind(), std::io::ErrorKind::NotFound);
/// ```
pub async fn remove_file(path: impl AsRef<Path>) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    asyncify(move || std::fs::remove_file(path)).await
}

/// Makes the directory `path`; its parent must exist (std's [`fs::create_dir`](std::fs::create_dir)).
///
/// # Errors
///
/// std's: `AlreadyExists`, `NotFound` for a missing parent, ...
///
/// # Examples
///
/// ```
/// let dir = std::env::temp_dir().join(format!("crew-create-dir-doc-{}", std::process::id()));
/// crew::block_on(async {
///     crew::fs::create_dir(&dir).await.unwrap();
///     assert!(crew::fs::metadata(&dir).await.unwrap().is_dir());
///     crew::fs::remove_dir(&dir).await.unwrap();
/// });
/// ```
pub async fn create_dir(path: impl AsRef<Path>) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    asyncify(move || std::fs::create_dir(path)).await
}

/// Makes the directory `path` and every missing parent (std's
/// [`fs::create_dir_all`](std::fs::create_dir_all)); a directory that exists is not an error.
///
/// # Errors
///
/// std's.
///
/// # Examples
///
/// ```
/// let top = std::env::temp_dir().join(format!("crew-create-dir-all-doc-{}", std::process::id()));
/// crew::block_on(async {
///     crew::fs::create_dir_all(top.join("a/b")).await.unwrap();
///     crew::fs::remove_dir_all(&top).await.unwrap();
/// });
/// ```
pub async fn create_dir_all(path: impl AsRef<Path>) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    asyncify(move || std::fs::create_dir_all(path)).await
}

/// Removes the empty directory `path` (std's [`fs::remove_dir`](std::fs::remove_dir)).
///
/// # Errors
///
/// std's: `NotFound`, a directory not empty, ...
///
/// # Examples
///
/// ```
/// let missing = crew::block_on(crew::fs::remove_dir("/no/such/dir"));
/// assert_eq!(missing.unwrap_err().kind(), std::io::ErrorKind::NotFound);
/// ```
pub async fn remove_dir(path: impl AsRef<Path>) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    asyncify(move || std::fs::remove_dir(path)).await
}

/// Removes the directory `path` with everything in it (std's
/// [`fs::remove_dir_all`](std::fs::remove_dir_all)), in one job.
///
/// # Errors
///
/// std's.
///
/// # Examples
///
/// ```
/// let top = std::env::temp_dir().join(format!("crew-remove-dir-all-doc-{}", std::process::id()));
/// crew::block_on(async {
///     crew::fs::create_dir_all(top.join("inner")).await.unwrap();
///     crew::fs::write(top.join("inner/file"), "x").await.unwrap();
///     crew::fs::remove_dir_all(&top).await.unwrap();
///     assert!(!crew::fs::try_exists(&top).await.unwrap());
/// });
/// ```
pub async fn remove_dir_all(path: impl AsRef<Path>) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    asyncify(move || std::fs::remove_dir_all(path)).await
}

/// The metadata of `path`, following symbolic links (std's [`fs::metadata`](std::fs::metadata)).
///
/// # Errors
///
/// std's.
///
/// # Examples
///
/// ```
/// assert!(crew::block_on(crew::fs::metadata("src")).unwrap().is_dir());
/// ```
pub async fn metadata(path: impl AsRef<Path>) -> io::Result<Metadata> {
    let path = path.as_ref().to_owned();
    asyncify(move || std::fs::metadata(path)).await
}

/// The metadata of `path` itself, a symbolic link's own (std's
/// [`fs::symlink_metadata`](std::fs::symlink_metadata)).
///
/// # Errors
///
/// std's.
///
/// # Examples
///
/// ```
/// assert!(crew::block_on(crew::fs::symlink_metadata("Cargo.toml")).unwrap().is_file());
/// ```
pub async fn symlink_metadata(path: impl AsRef<Path>) -> io::Result<Metadata> {
    let path = path.as_ref().to_owned();
    asyncify(move || std::fs::symlink_metadata(path)).await
}

/// The absolute path of `path`, every link and `..` resolved (std's
/// [`fs::canonicalize`](std::fs::canonicalize)).
///
/// # Errors
///
/// std's: `NotFound`, ...
///
/// # Examples
///
/// ```
/// let path = crew::block_on(crew::fs::canonicalize("src/../Cargo.toml")).unwrap();
/// assert!(path.is_absolute() && path.ends_with("Cargo.toml"));
/// ```
pub async fn canonicalize(path: impl AsRef<Path>) -> io::Result<PathBuf> {
    let path = path.as_ref().to_owned();
    asyncify(move || std::fs::canonicalize(path)).await
}

/// Whether `path` exists (std's [`Path::try_exists`]): `Ok(false)` for a path that does not
/// exist or a broken link, an error when the answer cannot be known (a denied permission).
///
/// # Errors
///
/// std's.
///
/// # Examples
///
/// ```
/// assert!(crew::block_on(crew::fs::try_exists("Cargo.toml")).unwrap());
/// assert!(!crew::block_on(crew::fs::try_exists("/no/such/file")).unwrap());
/// ```
pub async fn try_exists(path: impl AsRef<Path>) -> io::Result<bool> {
    let path = path.as_ref().to_owned();
    asyncify(move || path.try_exists()).await
}

/// Makes `link` a hard link to the file `original` (std's [`fs::hard_link`](std::fs::hard_link)).
///
/// # Errors
///
/// std's.
///
/// # Examples
///
/// ```
/// let dir = std::env::temp_dir();
/// let (file, link) = (dir.join(format!("crew-hard-a-{}", std::process::id())), dir.join(format!("crew-hard-b-{}", std::process::id())));
/// crew::block_on(async {
///     crew::fs::write(&file, "x").await.unwrap();
///     crew::fs::hard_link(&file, &link).await.unwrap();
///     assert_eq!(crew::fs::read(&link).await.unwrap(), b"x");
///     crew::fs::remove_file(&file).await.unwrap();
///     crew::fs::remove_file(&link).await.unwrap();
/// });
/// ```
pub async fn hard_link(original: impl AsRef<Path>, link: impl AsRef<Path>) -> io::Result<()> {
    let (original, link) = (original.as_ref().to_owned(), link.as_ref().to_owned());
    asyncify(move || std::fs::hard_link(original, link)).await
}

/// Makes `link` a symbolic link to `original` (std's
/// [`os::unix::fs::symlink`](std::os::unix::fs::symlink); Unix).
///
/// # Errors
///
/// std's.
///
/// # Examples
///
/// ```
/// let link = std::env::temp_dir().join(format!("crew-symlink-doc-{}", std::process::id()));
/// crew::block_on(async {
///     crew::fs::symlink("/etc/hostname", &link).await.unwrap();
///     assert_eq!(crew::fs::read_link(&link).await.unwrap(), std::path::Path::new("/etc/hostname"));
///     crew::fs::remove_file(&link).await.unwrap();
/// });
/// ```
#[cfg(unix)]
pub async fn symlink(original: impl AsRef<Path>, link: impl AsRef<Path>) -> io::Result<()> {
    let (original, link) = (original.as_ref().to_owned(), link.as_ref().to_owned());
    asyncify(move || std::os::unix::fs::symlink(original, link)).await
}

/// What the symbolic link `path` points to (std's [`fs::read_link`](std::fs::read_link)).
///
/// # Errors
///
/// std's: `InvalidInput` if `path` is not a link, ...
///
/// # Examples
///
/// ```
/// let not_a_link = crew::block_on(crew::fs::read_link("Cargo.toml"));
/// assert!(not_a_link.is_err());
/// ```
pub async fn read_link(path: impl AsRef<Path>) -> io::Result<PathBuf> {
    let path = path.as_ref().to_owned();
    asyncify(move || std::fs::read_link(path)).await
}

/// Sets the permissions of `path` (std's [`fs::set_permissions`](std::fs::set_permissions)).
///
/// # Errors
///
/// std's.
///
/// # Examples
///
/// ```
/// let path = std::env::temp_dir().join(format!("crew-set-perm-doc-{}", std::process::id()));
/// crew::block_on(async {
///     crew::fs::write(&path, "x").await.unwrap();
///     let mut permissions = crew::fs::metadata(&path).await.unwrap().permissions();
///     permissions.set_readonly(true);
///     crew::fs::set_permissions(&path, permissions).await.unwrap();
///     assert!(crew::fs::metadata(&path).await.unwrap().permissions().readonly());
///     crew::fs::remove_file(&path).await.unwrap();
/// });
/// ```
pub async fn set_permissions(path: impl AsRef<Path>, permissions: Permissions) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    asyncify(move || std::fs::set_permissions(path, permissions)).await
}
