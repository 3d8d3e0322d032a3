//! The loop's completion queue: closures from other threads that fill the response of a parked
//! connection. A Mutex<Vec> plus an eventfd doorbell; the loop swaps the Vec out under the lock
//! so the lock is held for a pointer swap only.

use super::Handler;
use crate::http::Response;
use crate::sys::eventfd::EventFd;
use std::sync::{Arc, Mutex};

pub(super) type Fill<H> = Box<dyn FnOnce(&mut H, &mut Response) + Send>;

/// One finished piece of parked work: the connection token and how to fill its response
/// (`None`: the Parker was dropped without resuming).
pub(super) struct Done<H> {
    pub token: u64,
    pub fill: Option<Fill<H>>,
}

pub(super) struct Queue<H> {
    pub loop_index: usize,
    pub items: Mutex<Vec<Done<H>>>,
    pub bell: Arc<EventFd>,
}

impl<H> Queue<H> {
    /// Queues `d` and rings the loop, unless items are already waiting: the loop was rung for
    /// those and takes this one with them (it drains the bell before it swaps the queue out).
    /// A writer finishing a group of N jobs so rings once, not N times.
    fn push(&self, d: Done<H>) {
        let mut was_empty = true;
        // A poisoned lock means a loop thread panicked, which aborts release builds; in tests the
        // item is simply lost with that loop.
        if let Ok(mut items) = self.items.lock() {
            was_empty = items.is_empty();
            items.push(d);
        }
        if was_empty {
            self.bell.ring();
        }
    }
}

/// A parked connection's ticket back to its loop. Send it to the thread doing the slow work.
pub struct Parker<H: Handler> {
    queue: Arc<Queue<H>>,
    token: u64,
    resumed: bool,
}

impl<H: Handler> Parker<H> {
    pub(super) fn new(queue: Arc<Queue<H>>, token: u64) -> Parker<H> {
        Parker { queue, token, resumed: false }
    }

    /// Queues `fill` to run on the connection's loop thread, with that loop's handler and the
    /// parked request's response. If the client has gone meanwhile, `fill` is dropped unrun.
    pub fn resume(mut self, fill: impl FnOnce(&mut H, &mut Response) + Send + 'static) {
        self.resumed = true;
        self.queue.push(Done { token: self.token, fill: Some(Box::new(fill)) });
    }
}

impl<H: Handler> Drop for Parker<H> {
    fn drop(&mut self) {
        if !self.resumed {
            self.queue.push(Done { token: self.token, fill: None });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queue_rings_once_until_the_loop_swaps_it_out() {
        let queue: Queue<()> = Queue { loop_index: 0, items: Mutex::new(Vec::new()), bell: Arc::new(EventFd::new().unwrap()) };
        for token in 1..=3 {
            queue.push(Done { token, fill: None });
        }
        assert_eq!(queue.bell.drain(), 1, "items already waiting need no second ring");
        let taken = std::mem::take(&mut *queue.items.lock().unwrap());
        assert_eq!(taken.iter().map(|d| d.token).collect::<Vec<_>>(), [1, 2, 3]);
        queue.push(Done { token: 4, fill: None });
        assert_eq!(queue.bell.drain(), 1, "after the swap, the next push rings again");
    }
}
