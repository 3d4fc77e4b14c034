//! The task dump of a pool (`Pool::dump`): its registry's recorded tasks, read without pausing
//! anything (see `dump.rs` at the crate root for the invariants). Where a recorded task waits
//! is noted by the queues (`Shared::record_queued`, `shared.rs`).

use crate::dump::{QueuedIn, TaskDump, TaskSnapshot, TaskState};
use crate::identity::Activity;
use crate::scheduler::cores::shared::Shared;

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
                    Activity::Running(Activity::NO_CORE) => TaskState::RunningOffWorker { elapsed },
                    Activity::Running(core) => TaskState::Running { worker: worker(core), elapsed },
                    Activity::Waiting => TaskState::Waiting { elapsed },
                    Activity::Injector => TaskState::Queued { place: QueuedIn::Injector, elapsed },
                    Activity::Lifo(core) => {
                        TaskState::Queued { place: QueuedIn::Lifo { worker: worker(core) }, elapsed }
                    }
                    Activity::Deque(core) => {
                        TaskState::Queued { place: QueuedIn::Deque { worker: worker(core) }, elapsed }
                    }
                    Activity::Deferred(core) => {
                        TaskState::Queued { place: QueuedIn::Deferred { worker: worker(core) }, elapsed }
                    }
                    Activity::Local(core) => {
                        let worker = (core != Activity::NO_CORE).then(|| worker(core));
                        TaskState::Queued { place: QueuedIn::Local { worker }, elapsed }
                    }
                    Activity::Ended => return None,
                };
                Some(TaskSnapshot::new(info, state, polls, age))
            })
            .collect();
        TaskDump::new(tasks, true)
    }
}
