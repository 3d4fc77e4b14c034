//! File benchmarks: `crew::fs` against `tokio::fs` and `async-fs` (smol's), each from a task of
//! its own executor with W workers (env `CREW_BENCH_WORKERS`, default 2): crew on a private
//! `crew::Pool`, tokio on its multi-thread runtime, async-fs on async-executor (its jobs go to
//! the `blocking` crate's pool).
//!
//! The workloads (the files live in `CREW_BENCH_FS_DIR`, default the system's temporary
//! directory; their pages stay in the page cache, so the blocking pools' round trips and the
//! copies are what is measured, not the disk):
//!
//! - `fs_read_8k`: a 100 MiB file read from the start in 8 KiB reads. crew at its default
//!   read-ahead (`crew`), and at 64 KiB, 128 KiB, 1 MiB and none (`crew_ra_*`: the read-ahead's size,
//!   measured); and `std_blocking`, std's reads on the benchmarking thread (the floor: one copy,
//!   no pool).
//! - `fs_write_8k`: the same 100 MiB written in 8 KiB writes to a truncated file, then flushed.
//! - `fs_read_small_1000`: 1,000 files of 1 KiB, each read whole with `read`, 16 at a time
//!   from one task (as a service loading templates).
//!
//! Run: `cargo bench --bench fs --features fs`.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion};
use futures::stream::{self, StreamExt};

#[allow(dead_code)]
mod common;

use common::{start_async_executor, start_crew, start_tokio, workers, Exec};

/// The big file's size.
const BIG: usize = 100 * 1024 * 1024;
/// One read or write of the big file.
const CHUNK: usize = 8 * 1024;
/// The small files, and how many are read at a time.
const SMALL_FILES: usize = 1_000;
const SMALL_SIZE: usize = 1024;
const SMALL_AT_ONCE: usize = 16;

fn dir() -> PathBuf {
    let base = std::env::var_os("CREW_BENCH_FS_DIR").map_or_else(std::env::temp_dir, PathBuf::from);
    let dir = base.join(format!("crew-bench-fs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("the benchmark's directory");
    dir
}

/// Runs `member` on each executor in turn (only the measured one runs).
fn members<F, Fut>(group: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>, runs: &[(&str, Runtime)], make: F)
where
    F: Fn(Runtime) -> Fut + Copy + Send + 'static,
    Fut: Future<Output = usize> + Send + 'static,
{
    let workers = workers();
    for &(name, runtime) in runs {
        match runtime {
            Runtime::Crew(_) => {
                let (owner, ex) = start_crew(workers);
                run(group, name, &ex, move || make(runtime));
                drop(ex);
                drop(owner);
            }
            Runtime::Tokio => {
                let (rt, ex) = start_tokio(workers);
                run(group, name, &ex, move || make(runtime));
                drop(ex);
                drop(rt);
            }
            Runtime::AsyncFs => {
                let (owner, ex) = start_async_executor(workers);
                run(group, name, &ex, move || make(runtime));
                drop(ex);
                drop(owner);
            }
        }
    }
}

fn run<E: Exec, Fut>(
    group: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    ex: &E,
    make: impl Fn() -> Fut,
) where
    Fut: Future<Output = usize> + Send + 'static,
{
    group.bench_function(name, |b| b.iter(|| assert!(ex.block_on(ex.spawn(make())) > 0)));
}

/// Whose file system calls a member makes; crew's with its read-ahead.
#[derive(Clone, Copy)]
enum Runtime {
    Crew(usize),
    Tokio,
    AsyncFs,
}

/// Reads `path` in 8 KiB reads; returns the bytes read.
async fn read_8k(runtime: Runtime, path: PathBuf) -> usize {
    let mut chunk = vec![0; CHUNK];
    let mut total = 0;
    match runtime {
        Runtime::Crew(read_ahead) => {
            use futures::AsyncReadExt;
            let mut file = crew::fs::File::open(path).await.unwrap();
            file.set_read_ahead(read_ahead);
            loop {
                match file.read(&mut chunk).await.unwrap() {
                    0 => break,
                    n => total += n,
                }
            }
        }
        Runtime::Tokio => {
            use tokio::io::AsyncReadExt;
            let mut file = tokio::fs::File::open(path).await.unwrap();
            loop {
                match file.read(&mut chunk).await.unwrap() {
                    0 => break,
                    n => total += n,
                }
            }
        }
        Runtime::AsyncFs => {
            use futures::AsyncReadExt;
            let mut file = async_fs::File::open(path).await.unwrap();
            loop {
                match file.read(&mut chunk).await.unwrap() {
                    0 => break,
                    n => total += n,
                }
            }
        }
    }
    assert_eq!(total, BIG);
    total
}

/// Writes [`BIG`] bytes to `path` in 8 KiB writes, then flushes; returns the bytes written.
async fn write_8k(runtime: Runtime, path: PathBuf) -> usize {
    let chunk = vec![7u8; CHUNK];
    match runtime {
        Runtime::Crew(_) => {
            use futures::AsyncWriteExt;
            let mut file = crew::fs::File::create(path).await.unwrap();
            for _ in 0..BIG / CHUNK {
                file.write_all(&chunk).await.unwrap();
            }
            file.flush().await.unwrap();
        }
        Runtime::Tokio => {
            use tokio::io::AsyncWriteExt;
            let mut file = tokio::fs::File::create(path).await.unwrap();
            for _ in 0..BIG / CHUNK {
                file.write_all(&chunk).await.unwrap();
            }
            file.flush().await.unwrap();
        }
        Runtime::AsyncFs => {
            use futures::AsyncWriteExt;
            let mut file = async_fs::File::create(path).await.unwrap();
            for _ in 0..BIG / CHUNK {
                file.write_all(&chunk).await.unwrap();
            }
            file.flush().await.unwrap();
        }
    }
    BIG
}

/// Reads each of `paths` whole, [`SMALL_AT_ONCE`] at a time; returns the bytes read.
async fn read_small(runtime: Runtime, paths: Vec<PathBuf>) -> usize {
    let total = stream::iter(paths)
        .map(|path| async move {
            match runtime {
                Runtime::Crew(_) => crew::fs::read(path).await.unwrap().len(),
                Runtime::Tokio => tokio::fs::read(path).await.unwrap().len(),
                Runtime::AsyncFs => async_fs::read(path).await.unwrap().len(),
            }
        })
        .buffer_unordered(SMALL_AT_ONCE)
        .fold(0, |total, n| async move { total + n })
        .await;
    assert_eq!(total, SMALL_FILES * SMALL_SIZE);
    total
}

fn group<'a>(c: &'a mut Criterion, name: &str) -> BenchmarkGroup<'a, criterion::measurement::WallTime> {
    let mut group = c.benchmark_group(name);
    group.sample_size(10).measurement_time(Duration::from_secs(4)).warm_up_time(Duration::from_secs(1));
    group
}

const PEERS: [(&str, Runtime); 3] =
    [("crew", Runtime::Crew(crew::fs::DEFAULT_READ_AHEAD)), ("tokio", Runtime::Tokio), ("async_fs", Runtime::AsyncFs)];

fn fs_read_8k(c: &mut Criterion) {
    let path = dir().join("big");
    std::fs::write(&path, vec![1u8; BIG]).unwrap();
    let mut runs = PEERS.to_vec();
    runs.extend([
        ("crew_ra_64k", Runtime::Crew(64 * 1024)),
        ("crew_ra_128k", Runtime::Crew(128 * 1024)),
        ("crew_ra_1m", Runtime::Crew(1024 * 1024)),
        ("crew_ra_none", Runtime::Crew(0)),
    ]);
    let mut group = group(c, "fs_read_8k");
    let shared: &'static Path = Box::leak(path.clone().into_boxed_path());
    members(&mut group, &runs, move |runtime| read_8k(runtime, shared.to_owned()));
    // The floor: std's reads on the benchmarking thread, one copy, no pool.
    group.bench_function("std_blocking", |b| {
        b.iter(|| {
            use std::io::Read;
            let mut file = std::fs::File::open(shared).unwrap();
            let (mut chunk, mut total) = (vec![0; CHUNK], 0);
            loop {
                match file.read(&mut chunk).unwrap() {
                    0 => break,
                    n => total += n,
                }
            }
            assert_eq!(total, BIG);
        })
    });
    group.finish();
    let _ = std::fs::remove_file(path);
}

fn fs_write_8k(c: &mut Criterion) {
    let path: &'static Path = Box::leak(dir().join("written").into_boxed_path());
    let mut group = group(c, "fs_write_8k");
    members(&mut group, &PEERS, move |runtime| write_8k(runtime, path.to_owned()));
    group.finish();
    let _ = std::fs::remove_file(path);
}

fn fs_read_small_1000(c: &mut Criterion) {
    let small = dir().join("small");
    std::fs::create_dir_all(&small).unwrap();
    let paths: Vec<PathBuf> = (0..SMALL_FILES).map(|i| small.join(format!("f{i}"))).collect();
    for path in &paths {
        std::fs::write(path, vec![2u8; SMALL_SIZE]).unwrap();
    }
    let paths: &'static [PathBuf] = Box::leak(paths.into_boxed_slice());
    let mut group = group(c, "fs_read_small_1000");
    members(&mut group, &PEERS, move |runtime| read_small(runtime, paths.to_vec()));
    group.finish();
    let _ = std::fs::remove_dir_all(small);
}

criterion_group!(benches, fs_read_8k, fs_write_8k, fs_read_small_1000);
criterion_main!(benches);
