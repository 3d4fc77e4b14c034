//! [`OpenOptions`]: std's options, opening on crew's blocking pool.
//!
//! Invariants:
//! - The options are std's, unchanged: a file opens exactly as `std::fs::OpenOptions` would open
//!   it, in a blocking job.

use std::io;
use std::path::Path;

use super::ops::asyncify;
use super::File;

/// How to open a file: std's [`OpenOptions`](std::fs::OpenOptions), whose
/// [`open`](OpenOptions::open) runs on crew's blocking pool and gives a [`File`].
///
/// # Examples
///
/// ```
/// use crew::fs::OpenOptions;
/// use crew::io::AsyncWriteExt;
///
/// let path = std::env::temp_dir().join(format!("crew-options-doc-{}", std::process::id()));
/// crew::block_on(async {
///     let mut log = OpenOptions::new().append(true).create(true).open(&path).await?;
///     log.write_all(b"one\n").await?;
///     log.flush().await?;
///     assert_eq!(crew::fs::read_to_string(&path).await?, "one\n");
///     crew::fs::remove_file(&path).await
/// })
/// .unwrap();
/// ```
#[derive(Clone, Debug)]
pub struct OpenOptions(std::fs::OpenOptions);

impl OpenOptions {
    /// No access at all yet: say [`read`](OpenOptions::read), [`write`](OpenOptions::write) or
    /// [`append`](OpenOptions::append).
    ///
    /// # Examples
    ///
    /// ```
    /// crew::block_on(async {
    ///     let none = crew::fs::OpenOptions::new().open("Cargo.toml").await;
    ///     assert_eq!(none.unwrap_err().kind(), std::io::ErrorKind::InvalidInput);
    /// });
    /// ```
    #[allow(clippy::new_without_default)] // std's shape
    pub fn new() -> OpenOptions {
        OpenOptions(std::fs::OpenOptions::new())
    }

    /// Opens for reading.
    ///
    /// # Examples
    ///
    /// ```
    /// crew::block_on(async {
    ///     assert!(crew::fs::OpenOptions::new().read(true).open("Cargo.toml").await.is_ok());
    /// });
    /// ```
    pub fn read(&mut self, read: bool) -> &mut OpenOptions {
        self.0.read(read);
        self
    }

    /// Opens for writing, from the start of the file.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut options = crew::fs::OpenOptions::new();
    /// options.write(true);
    /// ```
    pub fn write(&mut self, write: bool) -> &mut OpenOptions {
        self.0.write(write);
        self
    }

    /// Opens for writing at the end of the file, whatever the cursor says.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut options = crew::fs::OpenOptions::new();
    /// options.append(true);
    /// ```
    pub fn append(&mut self, append: bool) -> &mut OpenOptions {
        self.0.append(append);
        self
    }

    /// Truncates the file to 0 bytes when it opens (needs write access).
    ///
    /// # Examples
    ///
    /// ```
    /// let mut options = crew::fs::OpenOptions::new();
    /// options.write(true).truncate(true);
    /// ```
    pub fn truncate(&mut self, truncate: bool) -> &mut OpenOptions {
        self.0.truncate(truncate);
        self
    }

    /// Makes the file if it does not exist (needs write or append access).
    ///
    /// # Examples
    ///
    /// ```
    /// let mut options = crew::fs::OpenOptions::new();
    /// options.write(true).create(true);
    /// ```
    pub fn create(&mut self, create: bool) -> &mut OpenOptions {
        self.0.create(create);
        self
    }

    /// Makes the file, failing with `AlreadyExists` if it exists (`O_EXCL`: no race between the
    /// check and the creation).
    ///
    /// # Examples
    ///
    /// ```
    /// crew::block_on(async {
    ///     let taken = crew::fs::OpenOptions::new().write(true).create_new(true).open("Cargo.toml").await;
    ///     assert_eq!(taken.unwrap_err().kind(), std::io::ErrorKind::AlreadyExists);
    /// });
    /// ```
    pub fn create_new(&mut self, create_new: bool) -> &mut OpenOptions {
        self.0.create_new(create_new);
        self
    }

    /// The permission bits a new file gets (before the umask; Unix).
    ///
    /// # Examples
    ///
    /// ```
    /// let mut options = crew::fs::OpenOptions::new();
    /// options.write(true).create(true).mode(0o600);
    /// ```
    #[cfg(unix)]
    pub fn mode(&mut self, mode: u32) -> &mut OpenOptions {
        std::os::unix::fs::OpenOptionsExt::mode(&mut self.0, mode);
        self
    }

    /// Flags `open` gets besides those the options set (`O_NOFOLLOW`, `O_DIRECT`, ...; Unix).
    ///
    /// # Examples
    ///
    /// ```
    /// let mut options = crew::fs::OpenOptions::new();
    /// options.read(true).custom_flags(0);
    /// ```
    #[cfg(unix)]
    pub fn custom_flags(&mut self, flags: i32) -> &mut OpenOptions {
        std::os::unix::fs::OpenOptionsExt::custom_flags(&mut self.0, flags);
        self
    }

    /// Opens the file at `path` with these options, on the blocking pool.
    ///
    /// # Errors
    ///
    /// std's: `InvalidInput` for options that ask for no access or contradict each other,
    /// `NotFound`, `AlreadyExists` (with [`create_new`](OpenOptions::create_new)),
    /// `PermissionDenied`, ...
    ///
    /// # Examples
    ///
    /// ```
    /// crew::block_on(async {
    ///     let file = crew::fs::OpenOptions::new().read(true).open("Cargo.toml").await.unwrap();
    ///     assert!(file.metadata().await.unwrap().is_file());
    /// });
    /// ```
    pub async fn open(&self, path: impl AsRef<Path>) -> io::Result<File> {
        let (options, path) = (self.0.clone(), path.as_ref().to_owned());
        asyncify(move || options.open(path)).await.map(File::from_std)
    }
}

impl File {
    /// The options to open a file with: [`OpenOptions`].
    ///
    /// # Examples
    ///
    /// ```
    /// crew::block_on(async {
    ///     let file = crew::fs::File::options().read(true).open("Cargo.toml").await;
    ///     assert!(file.is_ok());
    /// });
    /// ```
    pub fn options() -> OpenOptions {
        OpenOptions::new()
    }

}

impl From<std::fs::OpenOptions> for OpenOptions {
    fn from(options: std::fs::OpenOptions) -> OpenOptions {
        OpenOptions(options)
    }
}
