//! `crew::fs` (the `fs` feature): std's effects through the blocking pool, and a `File` that reads
//! ahead and writes behind without ever putting a byte in the wrong place: a write after reads
//! lands where the reader stopped, a seek from the current position counts from the reader, a
//! write's error comes back from the next operation, a file dropped mid-write still finishes it.

mod common;

use std::io::{ErrorKind, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::{wait_until, with_timeout};
use crew::fs::{self, File, OpenOptions};
use crew::io::{AsyncBufReadExt, AsyncReadExt, AsyncSeekExt, AsyncWriteExt};
use futures::StreamExt;

/// A directory of the test's own, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed); // a unique number is all it gives
        let dir = std::env::temp_dir().join(format!("crew-fs-test-{}-{name}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `len` bytes that differ from their neighbours, so that a byte out of place shows.
fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

#[crew::test]
async fn the_free_functions_do_what_std_does() {
    let dir = TempDir::new("free");
    let (a, b) = (dir.join("a"), dir.join("b"));
    fs::write(&a, "first").await.unwrap();
    assert_eq!(fs::read_to_string(&a).await.unwrap(), "first");
    assert_eq!(fs::copy(&a, &b).await.unwrap(), 5);
    assert_eq!(fs::read(&b).await.unwrap(), b"first");
    fs::rename(&b, dir.join("c")).await.unwrap();
    assert!(!fs::try_exists(&b).await.unwrap());
    assert!(fs::metadata(dir.join("c")).await.unwrap().is_file());
    fs::create_dir_all(dir.join("x/y/z")).await.unwrap();
    assert!(fs::symlink_metadata(dir.join("x/y")).await.unwrap().is_dir());
    assert_eq!(fs::canonicalize(dir.join("x/y/../y")).await.unwrap(), fs::canonicalize(dir.join("x/y")).await.unwrap());
    fs::remove_dir(dir.join("x/y/z")).await.unwrap();
    assert_eq!(fs::remove_dir(dir.join("x")).await.unwrap_err().kind(), ErrorKind::DirectoryNotEmpty);
    fs::remove_dir_all(dir.join("x")).await.unwrap();
    fs::remove_file(&a).await.unwrap();
    assert_eq!(fs::read(&a).await.unwrap_err().kind(), ErrorKind::NotFound);
    assert_eq!(fs::create_dir(dir.join("no/parent")).await.unwrap_err().kind(), ErrorKind::NotFound);
}

#[crew::test]
async fn small_reads_see_every_byte_in_order() {
    let dir = TempDir::new("small-reads");
    let path = dir.join("data");
    // Not a multiple of the read-ahead nor of the reads: the last pieces are short.
    let data = pattern(3 * fs::DEFAULT_READ_AHEAD + 12_345);
    std::fs::write(&path, &data).unwrap();
    for read_ahead in [0, 4096, fs::DEFAULT_READ_AHEAD, 2 * 1024 * 1024] {
        let mut file = File::open(&path).await.unwrap();
        file.set_read_ahead(read_ahead);
        let mut got = Vec::new();
        let mut chunk = [0; 8192];
        loop {
            let n = file.read(&mut chunk).await.unwrap();
            if n == 0 {
                break;
            }
            got.extend_from_slice(&chunk[..n]);
        }
        assert_eq!(got.len(), data.len(), "read ahead {read_ahead}");
        assert!(got == data, "read ahead {read_ahead}: the bytes differ");
        // At the end it stays at the end.
        assert_eq!(file.read(&mut chunk).await.unwrap(), 0);
    }
}

#[crew::test]
async fn a_write_after_reads_lands_where_the_reader_stopped() {
    let dir = TempDir::new("write-after-read");
    let path = dir.join("data");
    std::fs::write(&path, pattern(100_000)).unwrap();
    let mut file = OpenOptions::new().read(true).write(true).open(&path).await.unwrap();
    let mut first = [0; 10];
    file.read_exact(&mut first).await.unwrap(); // reads far ahead
    file.write_all(b"XYZ").await.unwrap();
    let mut next = [0; 4];
    file.read_exact(&mut next).await.unwrap();
    file.flush().await.unwrap();
    let mut expected = pattern(100_000);
    expected[10..13].copy_from_slice(b"XYZ");
    assert_eq!(next, expected[13..17]);
    assert!(std::fs::read(&path).unwrap() == expected);
}

#[crew::test]
async fn seeks_count_from_the_reader_not_from_the_read_ahead() {
    let dir = TempDir::new("seek");
    let path = dir.join("data");
    let data = pattern(50_000);
    std::fs::write(&path, &data).unwrap();
    let mut file = File::open(&path).await.unwrap();
    let mut buf = [0; 100];
    file.read_exact(&mut buf).await.unwrap();
    assert_eq!(file.seek(SeekFrom::Current(0)).await.unwrap(), 100);
    assert_eq!(file.seek(SeekFrom::Current(-50)).await.unwrap(), 50);
    file.read_exact(&mut buf[..10]).await.unwrap();
    assert_eq!(buf[..10], data[50..60]);
    assert_eq!(file.seek(SeekFrom::End(-5)).await.unwrap(), 49_995);
    let mut tail = Vec::new();
    file.read_to_end(&mut tail).await.unwrap();
    assert_eq!(tail, data[49_995..]);
    assert_eq!(file.seek(SeekFrom::Start(7)).await.unwrap(), 7);
    file.read_exact(&mut buf[..3]).await.unwrap();
    assert_eq!(buf[..3], data[7..10]);
    let before_start = file.seek(SeekFrom::Current(-1_000)).await.unwrap_err();
    assert_eq!(before_start.kind(), ErrorKind::InvalidInput);
}

#[crew::test]
async fn set_len_drops_what_was_read_ahead() {
    let dir = TempDir::new("set-len");
    let path = dir.join("data");
    std::fs::write(&path, pattern(10_000)).unwrap();
    let mut file = OpenOptions::new().read(true).write(true).open(&path).await.unwrap();
    let mut buf = [0; 100];
    file.read_exact(&mut buf).await.unwrap();
    file.set_len(150).await.unwrap();
    let mut rest = Vec::new();
    file.read_to_end(&mut rest).await.unwrap();
    assert_eq!(rest, pattern(150)[100..]);
    assert_eq!(file.metadata().await.unwrap().len(), 150);
}

#[crew::test]
async fn a_write_behind_error_comes_back_from_the_next_operation() {
    let dir = TempDir::new("write-error");
    let path = dir.join("data");
    std::fs::write(&path, "read only").unwrap();
    // Opened for reading only: the kernel refuses the write (EBADF), in the job.
    let mut file = File::open(&path).await.unwrap();
    assert_eq!(file.write(b"x").await.unwrap(), 1, "a write returns once its bytes are buffered");
    assert!(file.flush().await.is_err(), "flush reports the write's error");
    assert!(file.flush().await.is_ok(), "once");

    assert_eq!(file.write(b"y").await.unwrap(), 1);
    let mut buf = [0; 4];
    assert!(file.read(&mut buf).await.is_err(), "a read reports it too");
    assert_eq!(file.write(b"z").await.unwrap(), 1);
    assert!(file.sync_all().await.is_err(), "and sync_all");
    assert_eq!(std::fs::read(&path).unwrap(), b"read only");
}

#[test]
fn a_file_dropped_mid_write_finishes_the_write() {
    with_timeout(|| {
        let dir = TempDir::new("drop-mid-write");
        let path = dir.join("data");
        let data = pattern(8 * 1024 * 1024 + 123);
        crew::block_on(async {
            let mut file = File::create(&path).await.unwrap();
            // Written behind: most of it is still in the file's buffers or its job when the
            // file is dropped.
            for piece in data.chunks(8 * 1024) {
                file.write_all(piece).await.unwrap();
            }
        });
        wait_until("the dropped file's writes to finish", || {
            std::fs::metadata(&path).unwrap().len() == data.len() as u64
        });
        assert!(std::fs::read(&path).unwrap() == data);
    });
}

#[crew::test]
async fn small_writes_of_every_size_land_in_order() {
    let dir = TempDir::new("small-writes");
    let path = dir.join("data");
    let data = pattern(6 * 1024 * 1024 + 7);
    let mut file = File::create(&path).await.unwrap();
    let mut at = 0;
    let mut size = 1;
    while at < data.len() {
        let end = (at + size).min(data.len());
        file.write_all(&data[at..end]).await.unwrap();
        at = end;
        size = size * 7 % 65_521 + 1; // 1 byte to 64 KiB, in no order
    }
    file.flush().await.unwrap();
    assert!(std::fs::read(&path).unwrap() == data);
}

#[crew::test]
async fn reads_and_seeks_see_the_writes_before_them() {
    let dir = TempDir::new("write-then-read");
    let path = dir.join("data");
    std::fs::write(&path, pattern(1000)).unwrap();
    let mut file = OpenOptions::new().read(true).write(true).open(&path).await.unwrap();
    file.write_all(b"abc").await.unwrap();
    // No flush: the read comes after the write, at the cursor the write left.
    let mut next = [0; 2];
    file.read_exact(&mut next).await.unwrap();
    assert_eq!(next, pattern(5)[3..5]);
    assert_eq!(file.seek(SeekFrom::Start(0)).await.unwrap(), 0);
    let mut head = [0; 5];
    file.read_exact(&mut head).await.unwrap();
    assert_eq!(&head, &[b'a', b'b', b'c', 3, 4]);
    // A write, then a seek back over it and a write on top: in order.
    file.write_all(b"XYZ").await.unwrap();
    file.seek(SeekFrom::Current(-2)).await.unwrap();
    file.write_all(b"q").await.unwrap();
    file.sync_all().await.unwrap();
    assert_eq!(std::fs::read(&path).unwrap()[..9], [b'a', b'b', b'c', 3, 4, b'X', b'q', b'Z', 8]);
}

#[crew::test]
async fn a_read_abandoned_in_flight_leaves_the_cursor_right() {
    let dir = TempDir::new("abandoned-read");
    let path = dir.join("data");
    std::fs::write(&path, pattern(300_000)).unwrap();
    let mut file = OpenOptions::new().read(true).write(true).open(&path).await.unwrap();
    file.set_read_ahead(0);
    let mut buf = [0; 10];
    file.read_exact(&mut buf).await.unwrap();
    // A read polled once and dropped: its job in flight (or done, if it was that quick).
    let mut big = vec![0; 1024 * 1024];
    let read = match futures::poll!(Box::pin(file.read(&mut big))) {
        std::task::Poll::Ready(read) => read.unwrap(),
        std::task::Poll::Pending => 0,
    };
    file.write_all(b"W").await.unwrap();
    file.flush().await.unwrap();
    let at = 10 + read;
    let mut expected = pattern(300_000);
    expected.truncate(at); // at most the end, where a read that took everything left it
    expected.push(b'W');
    expected.extend_from_slice(pattern(300_000).get(at + 1..).unwrap_or_default());
    assert!(std::fs::read(&path).unwrap() == expected, "the write landed at {at}");
}

#[crew::test]
async fn the_file_is_a_buffered_reader_itself() {
    let dir = TempDir::new("lines");
    let path = dir.join("lines");
    let text: String = (0..10_000).map(|i| format!("line {i}\n")).collect();
    fs::write(&path, &text).await.unwrap();
    let lines: Vec<String> = File::open(&path).await.unwrap().lines().map(Result::unwrap).collect().await;
    assert_eq!(lines.len(), 10_000);
    assert_eq!(lines[9_999], "line 9999");
}

#[crew::test]
async fn append_and_create_new_keep_std_s_meaning() {
    let dir = TempDir::new("append");
    let path = dir.join("log");
    for line in ["a\n", "b\n"] {
        let mut log = OpenOptions::new().append(true).create(true).open(&path).await.unwrap();
        log.write_all(line.as_bytes()).await.unwrap();
        log.flush().await.unwrap();
    }
    assert_eq!(fs::read_to_string(&path).await.unwrap(), "a\nb\n");
    assert_eq!(File::create_new(&path).await.unwrap_err().kind(), ErrorKind::AlreadyExists);
    let mut truncated = File::create(&path).await.unwrap();
    truncated.write_all(b"c").await.unwrap();
    truncated.sync_data().await.unwrap();
    assert_eq!(fs::read(&path).await.unwrap(), b"c");
}

#[crew::test]
async fn read_dir_gives_every_entry_once() {
    let dir = TempDir::new("read-dir");
    // More than one batch of 32.
    for i in 0..100 {
        std::fs::write(dir.join(&format!("f{i}")), "").unwrap();
    }
    std::fs::create_dir(dir.join("sub")).unwrap();
    let mut entries = fs::read_dir(&dir.0).await.unwrap();
    let mut names = Vec::new();
    while let Some(entry) = entries.next_entry().await.unwrap() {
        assert_eq!(entry.path(), dir.0.join(entry.file_name()));
        let is_dir = entry.file_type().await.unwrap().is_dir();
        assert_eq!(is_dir, entry.file_name() == "sub");
        names.push(entry.file_name().into_string().unwrap());
    }
    assert!(entries.next_entry().await.unwrap().is_none(), "it stays ended");
    names.sort();
    let mut expected: Vec<String> = (0..100).map(|i| format!("f{i}")).chain(["sub".to_owned()]).collect();
    expected.sort();
    assert_eq!(names, expected);

    // The same as a stream.
    let streamed = fs::read_dir(&dir.0).await.unwrap().filter_map(|entry| async move { entry.ok() }).count().await;
    assert_eq!(streamed, 101);
    assert_eq!(fs::read_dir(dir.join("f1")).await.unwrap_err().kind(), ErrorKind::NotADirectory);
}

#[crew::test]
async fn into_std_gives_the_cursor_at_the_reader() {
    use std::io::Read;

    let dir = TempDir::new("into-std");
    let path = dir.join("data");
    let data = pattern(100_000);
    std::fs::write(&path, &data).unwrap();
    let mut file = File::open(&path).await.unwrap();
    let mut buf = [0; 1000];
    file.read_exact(&mut buf).await.unwrap();
    // A metadata call whose future is dropped once polled: its job may still hold the file.
    let _ = futures::poll!(Box::pin(file.metadata()));
    let mut std = file.into_std().await;
    std.read_exact(&mut buf).unwrap();
    assert_eq!(buf[..], data[1000..2000]);
}

#[test]
fn a_paused_clock_does_not_move_past_a_file_job() {
    // A read in flight is the pool's work: the paused clock does not jump a timer past it.
    let pool = crew::Pool::builder().workers(1).start_paused(true).build().unwrap();
    let dir = TempDir::new("paused");
    let path = dir.join("data");
    std::fs::write(&path, pattern(4 * 1024 * 1024)).unwrap();
    let read = with_timeout(move || {
        pool.block_on(async move {
            // Made inside the pool's `block_on`: on the pool's clock (docs/testing.md).
            crew::time::timeout(Duration::from_millis(1), async move {
                let mut file = File::open(&path).await.unwrap();
                file.set_read_ahead(0);
                let mut all = Vec::new();
                let mut chunk = vec![0; 64 * 1024];
                // 64 jobs in a row, each real time that the paused clock must not see.
                loop {
                    match file.read(&mut chunk).await.unwrap() {
                        0 => break all.len(),
                        n => all.extend_from_slice(&chunk[..n]),
                    }
                }
            })
            .await
        })
    });
    assert_eq!(read.unwrap(), 4 * 1024 * 1024);
}

#[crew::test]
async fn many_files_at_once() {
    let dir = TempDir::new("many");
    let paths: Vec<PathBuf> = (0..200).map(|i| dir.join(&format!("f{i}"))).collect();
    let writes: Vec<_> = paths
        .iter()
        .enumerate()
        .map(|(i, path)| {
            let path = path.clone();
            crew::spawn(async move { fs::write(&path, i.to_string()).await.unwrap() })
        })
        .collect();
    for write in writes {
        write.await;
    }
    let reads: Vec<_> =
        paths.iter().cloned().map(|path: PathBuf| crew::spawn(async move { fs::read_to_string(path).await })).collect();
    for (i, read) in reads.into_iter().enumerate() {
        assert_eq!(read.await.unwrap(), i.to_string());
    }
    assert!(Path::new(&dir.0).exists());
}
