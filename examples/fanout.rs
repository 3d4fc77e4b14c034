//! Nested spawns: a task tree where every node spawns its children and sums their results,
//! run on a private pool, plus `block_on` nested inside pool tasks.
//!
//! Run with `cargo run --release --example fanout`.

use std::future::Future;
use std::pin::Pin;
use std::time::Instant;

/// Counts the nodes of a tree of the given depth and fan-out, one task per node.
fn count_nodes(depth: u32, fanout: u32) -> Pin<Box<dyn Future<Output = u64> + Send>> {
    Box::pin(async move {
        if depth == 0 {
            return 1;
        }
        let children: Vec<_> = (0..fanout).map(|_| crew::spawn(count_nodes(depth - 1, fanout))).collect();
        let mut total = 1;
        for child in children {
            total += child.await;
        }
        total
    })
}

fn main() {
    let (depth, fanout) = (6, 6);
    let start = Instant::now();
    let nodes = crew::block_on(crew::spawn(count_nodes(depth, fanout)));
    let expected: u64 = (0..=depth).map(|d| u64::from(fanout).pow(d)).sum();
    assert_eq!(nodes, expected);
    println!("fan-out tree of depth {depth}, fan-out {fanout}: {nodes} tasks in {:.2?}", start.elapsed());

    // block_on inside pool tasks, three levels deep, on a one-worker pool: each blocking worker
    // hands its queue to a replacement thread, so this cannot deadlock.
    let pool = crew::Pool::builder().workers(1).thread_name("nested").build().expect("a one-worker pool");
    let inner = pool.spawn(async {
        crew::block_on(crew::spawn(async { crew::block_on(crew::spawn(async { "three levels down" })) }))
    });
    println!("nested block_on: {}", crew::block_on(inner));
}
