//! The task dump of a pool (`Pool::dump`): its registry's recorded tasks, read without pausing
//! anything (see `dump.rs` at the crate root for the invariants).

use super::shared::Shared;
use crate::dump::{QueuedIn, TaskDump, TaskSnapshot, TaskState};
use crate::task::Doing;

impl Shared {
    /// Every live task with a record, as of now.
    pub(crate) fn dump(&self) -> TaskDump {
        let Some(registry) = self.registry().filter(|_| self.keeps_task_records()) else {
            return TaskDump::new(Vec::new(), false);
        };
        let worker = |core: usize| self.worker_number(core);
        let tasks = registry
            .recorded()
            .into_iter()
            .filter_map(|info| {
                let (doing, elapsed, polls, age) = info.record()?.read();
                let state = match doing {
                    Doing::Running(core) => TaskState::Running { worker: worker(core), elapsed },
                    Doing::Waiting => TaskState::Waiting { elapsed },
                    Doing::Injector => TaskState::Queued { place: QueuedIn::Injector, elapsed },
                    Doing::Lifo(core) => TaskState::Queued { place: QueuedIn::Lifo { worker: worker(core) }, elapsed },
                    Doing::Deque(core) => {
                        TaskState::Queued { place: QueuedIn::Deque { worker: worker(core) }, elapsed }
                    }
                    Doing::Deferred(core) => {
                        TaskState::Queued { place: QueuedIn::Deferred { worker: worker(core) }, elapsed }
                    }
                    Doing::Ended => return None,
                };
                Some(TaskSnapshot::new(info, state, polls, age))
            })
            .collect();
        TaskDump::new(tasks, true)
    }
}
