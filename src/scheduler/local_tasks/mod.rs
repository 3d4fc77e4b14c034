//! Local (`!Send`) tasks above the cores: spawning them (`local_spawn.rs`), running them off a
//! core (`local_drive.rs`), and a worker's turn of them (`local_turn.rs`). Their home, the
//! thread's own queue, is `cores/local.rs`, whose module docs state the invariants.

pub(in crate::scheduler) mod local_drive;
pub(in crate::scheduler) mod local_spawn;
pub(in crate::scheduler) mod local_turn;
