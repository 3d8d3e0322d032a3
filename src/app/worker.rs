//! The worker pool: one or two threads for slow work a loop must never do (bcrypt today;
//! image previews and outbound HTTP later, design §2).
//!
//! A task is a boxed closure. It reports back by resuming the parked connection it came from
//! (`server` park/resume), so the pool knows nothing about HTTP. The queue is bounded: when it
//! is full `submit` refuses at once and the caller answers 503, instead of letting a flood of
//! sign-ins queue minutes of bcrypt.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread;

/// A unit of slow work.
pub type Task = Box<dyn FnOnce() + Send>;

/// Tasks waiting beyond this many are refused (about 60 s of bcrypt on one thread at cost 12).
pub const QUEUE_CAPACITY: usize = 256;

/// A cloneable handle on the pool; every loop holds one.
#[derive(Clone)]
pub struct Worker {
    tx: SyncSender<Task>,
}

impl Worker {
    /// Starts `threads` worker threads (at least one) named `worker-N`.
    pub fn start(threads: usize) -> std::io::Result<Worker> {
        let (tx, rx) = mpsc::sync_channel::<Task>(QUEUE_CAPACITY);
        let rx = Arc::new(Mutex::new(rx));
        for n in 0..threads.max(1) {
            let rx = Arc::clone(&rx);
            thread::Builder::new().name(format!("worker-{n}")).spawn(move || serve(&rx))?;
        }
        Ok(Worker { tx })
    }

    /// Queues `task`; false when the queue is full or the pool is gone (the caller answers 503).
    pub fn submit(&self, task: impl FnOnce() + Send + 'static) -> bool {
        match self.tx.try_send(Box::new(task)) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => false,
        }
    }
}

/// A bound on one kind of task in the pool (password checks): the queue's own bound is for
/// everything, and a sign-in queued behind 256 bcrypt runs would wait a minute.
pub struct Permits {
    in_use: AtomicUsize,
    limit: usize,
}

/// Held while one bounded task is queued or running; gives its place back when dropped.
pub struct Permit(Arc<Permits>);

impl Permits {
    pub fn new(limit: usize) -> Arc<Permits> {
        Arc::new(Permits { in_use: AtomicUsize::new(0), limit: limit.max(1) })
    }

    /// A place, or `None` when `limit` tasks hold one.
    pub fn try_take(self: &Arc<Permits>) -> Option<Permit> {
        let taken = self.in_use.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < self.limit).then_some(n + 1));
        taken.ok().map(|_| Permit(Arc::clone(self)))
    }

    pub fn in_use(&self) -> usize {
        self.in_use.load(Ordering::Acquire)
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.0.in_use.fetch_sub(1, Ordering::AcqRel);
    }
}

/// One worker thread: take the next task, run it, until every handle is dropped.
fn serve(rx: &Mutex<Receiver<Task>>) {
    loop {
        // Hold the lock only while receiving, not while running the task.
        let task = match rx.lock() {
            Ok(guard) => guard.recv(),
            Err(poisoned) => poisoned.into_inner().recv(),
        };
        match task {
            Ok(task) => task(),
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn permits_bound_and_come_back() {
        let p = Permits::new(2);
        let a = p.try_take().unwrap();
        let b = p.try_take().unwrap();
        assert!(p.try_take().is_none());
        assert_eq!(p.in_use(), 2);
        drop(a);
        let c = p.try_take().unwrap();
        drop((b, c));
        assert_eq!(p.in_use(), 0);
    }

    #[test]
    fn runs_tasks_off_the_calling_thread() {
        let w = Worker::start(2).unwrap();
        let (tx, rx) = mpsc::channel();
        let me = thread::current().id();
        for i in 0..10 {
            let tx = tx.clone();
            assert!(w.submit(move || {
                tx.send((i, thread::current().id())).unwrap();
            }));
        }
        let mut seen = Vec::new();
        for _ in 0..10 {
            let (i, id) = rx.recv_timeout(Duration::from_secs(5)).unwrap();
            assert_ne!(id, me);
            seen.push(i);
        }
        seen.sort();
        assert_eq!(seen, (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn refuses_when_full() {
        let w = Worker::start(1).unwrap();
        let gate = Arc::new(Mutex::new(()));
        let held = gate.lock().unwrap();
        let ran = Arc::new(AtomicUsize::new(0));
        let mut accepted = 0;
        for _ in 0..QUEUE_CAPACITY + 10 {
            let (gate, ran) = (Arc::clone(&gate), Arc::clone(&ran));
            if w.submit(move || {
                let _g = gate.lock();
                ran.fetch_add(1, Ordering::SeqCst);
            }) {
                accepted += 1;
            }
        }
        // One task is running (blocked on the gate), the queue holds QUEUE_CAPACITY.
        assert!((QUEUE_CAPACITY..=QUEUE_CAPACITY + 1).contains(&accepted), "{accepted}");
        drop(held);
        for _ in 0..500 {
            if ran.load(Ordering::SeqCst) == accepted {
                return;
            }
            thread::sleep(Duration::from_millis(10));
        }
        panic!("tasks did not all run");
    }
}
