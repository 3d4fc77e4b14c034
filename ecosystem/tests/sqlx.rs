//! sqlx with SQLite (a real embedded database: a file in a temp dir, WAL mode, a busy timeout)
//! in crew tasks, with no wrapper: sqlx's tokio runtime (its pool's `tokio::spawn`s, its timers)
//! finds the context crew's `tokio` feature gives every crew thread. Proves that:
//! - one crew task creates a table and inserts 10,000 rows in one transaction;
//! - then 100 concurrent crew tasks each read and update their own 100 rows, each in a
//!   transaction of its own (`BEGIN IMMEDIATE`: SQLite has one writer at a time, and the others
//!   wait in the busy timeout, never failing on a stale read snapshot);
//! - the final state is what those transactions wrote, checked row by row.
//!
//! Without the context (`cargo test --no-default-features`) the test fails at its first line,
//! in `crew_ecosystem::tokio_context`.

use std::time::Duration;

use crew_ecosystem::{join, tokio_context};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};

/// Only turns a hang into a failure: nothing here takes more than a few seconds.
const LIMIT: Duration = Duration::from_secs(120);
const TASKS: i64 = 100;
const ROWS_PER_TASK: i64 = 100;
const ROWS: i64 = TASKS * ROWS_PER_TASK;

/// Row `id` belongs to task `id / ROWS_PER_TASK`, starts with `value = id`, and task `owner`
/// sets it to `id * 2 + owner`.
fn updated(id: i64) -> i64 {
    id * 2 + id / ROWS_PER_TASK
}

async fn create_and_fill(pool: &SqlitePool) {
    tokio_context();
    let mut tx = pool.begin().await.expect("begin");
    sqlx::query(
        "CREATE TABLE rows (id INTEGER PRIMARY KEY, owner INTEGER NOT NULL, value INTEGER NOT NULL, \
         updates INTEGER NOT NULL DEFAULT 0)",
    )
    .execute(&mut *tx)
    .await
    .expect("create table");
    sqlx::query("CREATE INDEX rows_owner ON rows (owner)").execute(&mut *tx).await.expect("create index");
    for id in 0..ROWS {
        sqlx::query("INSERT INTO rows (id, owner, value) VALUES (?, ?, ?)")
            .bind(id)
            .bind(id / ROWS_PER_TASK)
            .bind(id)
            .execute(&mut *tx)
            .await
            .expect("insert");
    }
    tx.commit().await.expect("commit the 10,000 rows");
}

/// Task `owner`: reads its rows, checks them, and updates each, in one transaction.
async fn update_own_rows(pool: SqlitePool, owner: i64) {
    tokio_context();
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await.expect("begin immediate");
    let rows: Vec<(i64, i64, i64)> = sqlx::query_as("SELECT id, value, updates FROM rows WHERE owner = ? ORDER BY id")
        .bind(owner)
        .fetch_all(&mut *tx)
        .await
        .expect("read own rows");
    assert_eq!(rows.len() as i64, ROWS_PER_TASK, "task {owner}'s rows");
    for (i, (id, value, updates)) in rows.into_iter().enumerate() {
        assert_eq!(id, owner * ROWS_PER_TASK + i as i64);
        assert_eq!((value, updates), (id, 0), "row {id} untouched before its task");
        sqlx::query("UPDATE rows SET value = ?, updates = updates + 1 WHERE id = ?")
            .bind(value * 2 + owner)
            .bind(id)
            .execute(&mut *tx)
            .await
            .expect("update own row");
    }
    tx.commit().await.expect("commit own rows");
}

#[test]
fn sqlite_table_filled_by_one_task_then_updated_by_100_concurrent_tasks() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let options = SqliteConnectOptions::new()
        .filename(dir.path().join("crew.db"))
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .busy_timeout(LIMIT);
    let run = crew::spawn_with(crew::Catch, async move {
        tokio_context();
        let pool = SqlitePoolOptions::new()
            .max_connections(8)
            .acquire_timeout(LIMIT)
            .connect_with(options)
            .await
            .expect("open the database");
        let mode: String = sqlx::query_scalar("PRAGMA journal_mode").fetch_one(&pool).await.expect("journal mode");
        assert_eq!(mode, "wal");

        // One task creates and fills the table.
        let fill = pool.clone();
        crew::spawn(async move { create_and_fill(&fill).await }).await;
        let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM rows").fetch_one(&pool).await.expect("count");
        assert_eq!(count, ROWS);

        // 100 tasks at once, each on its own rows, in a transaction of its own.
        let tasks: Vec<_> = (0..TASKS).map(|owner| crew::spawn(update_own_rows(pool.clone(), owner))).collect();
        futures::future::join_all(tasks).await;

        // Row by row.
        let rows: Vec<(i64, i64, i64, i64)> = sqlx::query_as("SELECT id, owner, value, updates FROM rows ORDER BY id")
            .fetch_all(&pool)
            .await
            .expect("read back");
        assert_eq!(rows.len() as i64, ROWS);
        for (expected_id, (id, owner, value, updates)) in (0..ROWS).zip(rows) {
            assert_eq!(id, expected_id);
            assert_eq!(owner, id / ROWS_PER_TASK, "row {id}'s owner");
            assert_eq!(value, updated(id), "row {id}'s value");
            assert_eq!(updates, 1, "row {id} updated once");
        }
        pool.close().await;
    });
    crew::block_on(crew::time::timeout(LIMIT * 2, join(run))).expect("the database work hung");
}
