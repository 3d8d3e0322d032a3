//! The outbound job threads: two threads with small stacks taking boxed closures from one
//! bounded queue. Webhook deliveries, Web Push and link fetches run here, never on a loop
//! (design §2). The threads start with the first job, so a server that never calls out never
//! has them.

use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, OnceLock};

/// Jobs waiting beyond this many are dropped (and logged): a burst of mentions of a dead
/// webhook must not grow memory without bound.
pub const QUEUE_CAPACITY: usize = 1000;
/// Threads taking jobs: two, so one slow peer (a 7 s webhook timeout) does not stall the rest.
pub const THREADS: usize = 2;
/// Stack per thread: enough for a TLS handshake and an SQLite query, far below the default 8 MiB.
pub const STACK_BYTES: usize = 512 * 1024;

type Job = Box<dyn FnOnce() + Send>;

static QUEUE: OnceLock<Option<SyncSender<Job>>> = OnceLock::new();

fn start() -> Option<SyncSender<Job>> {
    let (tx, rx) = mpsc::sync_channel::<Job>(QUEUE_CAPACITY);
    let rx = Arc::new(Mutex::new(rx));
    let mut started = 0;
    for n in 0..THREADS {
        let rx = Arc::clone(&rx);
        match std::thread::Builder::new().name(format!("outbound-{n}")).stack_size(STACK_BYTES).spawn(move || serve(&rx)) {
            Ok(_) => started += 1,
            Err(e) => eprintln!("outbound: cannot start a job thread: {e}"),
        }
    }
    (started > 0).then_some(tx)
}

/// Queues `job`; false when the queue is full or no thread could be started (the job is
/// dropped and one line is logged).
pub fn spawn(job: Job) -> bool {
    let Some(tx) = QUEUE.get_or_init(start) else {
        eprintln!("outbound: no job threads, job dropped");
        return false;
    };
    match tx.try_send(job) {
        Ok(()) => true,
        Err(TrySendError::Full(_)) => {
            eprintln!("outbound: job queue full ({QUEUE_CAPACITY}), job dropped");
            false
        }
        Err(TrySendError::Disconnected(_)) => {
            eprintln!("outbound: job threads gone, job dropped");
            false
        }
    }
}

fn serve(rx: &Mutex<Receiver<Job>>) {
    loop {
        // Hold the lock only while receiving, not while running the job.
        let job = match rx.lock() {
            Ok(guard) => guard.recv(),
            Err(poisoned) => poisoned.into_inner().recv(),
        };
        match job {
            Ok(job) => job(),
            Err(_) => return,
        }
    }
}
