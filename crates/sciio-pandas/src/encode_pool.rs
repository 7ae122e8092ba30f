//! Worker threads that encode the column chunks of Parquet row groups in the background.
//!
//! The writer hands each batch's columns to the pool as jobs (see `column_lanes`), then
//! each row group's closing, keeping a [`Pending`] ticket per row group; the workers take
//! jobs from one shared queue in order, so both threads encode from the first batch on and
//! the caller goes on preparing (or reading) the next rows meanwhile. The tickets are
//! redeemed in row-group order, so the file is the same bytes as a sequential writer's.
//!
//! A job that fails or panics is reported through its ticket (panics contained as errors);
//! a worker that dies without answering makes the ticket an error too, never a wait forever.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use sciio_core::contain::contain_panics;
use sciio_core::{Error, Result};

/// The function a pool runs on each job.
type Work<J, T> = fn(J) -> Result<T>;

/// One job with where its outcome goes: its position in the row group and the row group's
/// result channel.
struct Task<J, T> {
    position: usize,
    job: J,
    done: Sender<(usize, Result<T>)>,
}

/// A fixed set of worker threads running `work` on jobs in the order they were queued.
pub(crate) struct EncodePool<J: Send + 'static, T: Send + 'static> {
    queue: Option<Sender<Task<J, T>>>,
    workers: Vec<JoinHandle<()>>,
    /// Set when the pool is dropped: queued jobs are skipped, not run.
    cancelled: Arc<AtomicBool>,
}

/// The outcome of one batch of jobs (a row group's columns), redeemed with [`Pending::wait`].
pub(crate) struct Pending<T> {
    jobs: usize,
    results: Receiver<(usize, Result<T>)>,
}

impl<J: Send + 'static, T: Send + 'static> EncodePool<J, T> {
    /// Starts `threads` workers (at least 1) running `work`.
    pub(crate) fn new(threads: usize, work: Work<J, T>) -> Result<Self> {
        let (queue, jobs) = channel::<Task<J, T>>();
        let jobs = Arc::new(Mutex::new(jobs));
        let cancelled = Arc::new(AtomicBool::new(false));
        let mut workers = Vec::new();
        for i in 0..threads.max(1) {
            let jobs = Arc::clone(&jobs);
            let cancelled = Arc::clone(&cancelled);
            let worker = std::thread::Builder::new()
                .name(format!("parquet-encode-{i}"))
                .spawn(move || run_worker(&jobs, &cancelled, work))
                .map_err(|e| Error::io("cannot start a Parquet encoding thread", e))?;
            workers.push(worker);
        }
        Ok(EncodePool {
            queue: Some(queue),
            workers,
            cancelled,
        })
    }

    /// Queues `jobs` (run in this order, each on the first free worker) and returns the
    /// ticket for their outcomes.
    pub(crate) fn submit(&self, jobs: Vec<J>) -> Result<Pending<T>> {
        let (done, results) = channel();
        let n = jobs.len();
        let queue = self
            .queue
            .as_ref()
            .ok_or_else(|| Error::invalid_input("the encoding threads are stopped"))?;
        for (position, job) in jobs.into_iter().enumerate() {
            queue
                .send(Task {
                    position,
                    job,
                    done: done.clone(),
                })
                .map_err(|_| Error::invalid_input("the encoding threads stopped"))?;
        }
        Ok(Pending { jobs: n, results })
    }
}

impl<J: Send + 'static, T: Send + 'static> Drop for EncodePool<J, T> {
    fn drop(&mut self) {
        self.cancelled.store(true, Ordering::Relaxed);
        // Closing the queue ends each worker after its current job.
        drop(self.queue.take());
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
    }
}

fn run_worker<J, T>(jobs: &Mutex<Receiver<Task<J, T>>>, cancelled: &AtomicBool, work: Work<J, T>) {
    loop {
        // The lock is held only to take the next task, not while running it.
        let task = match jobs.lock() {
            Ok(queue) => queue.recv(),
            Err(_) => return,
        };
        let Ok(task) = task else {
            return;
        };
        if cancelled.load(Ordering::Relaxed) {
            continue;
        }
        let outcome = contain_panics("parquet: encoding a column chunk", || work(task.job));
        // The ticket's owner may be gone (the writer failed): nothing to report to.
        let _ = task.done.send((task.position, outcome));
    }
}

impl<T> Pending<T> {
    /// Waits for every job's outcome: the results in job order, or the first failing job's
    /// error (by position).
    pub(crate) fn wait(self) -> Result<Vec<T>> {
        let mut slots: Vec<Option<Result<T>>> = (0..self.jobs).map(|_| None).collect();
        for _ in 0..self.jobs {
            let (position, outcome) = self.results.recv().map_err(|_| {
                Error::invalid_input("internal: a Parquet encoding thread stopped without a result")
            })?;
            if let Some(slot) = slots.get_mut(position) {
                *slot = Some(outcome);
            }
        }
        slots
            .into_iter()
            .map(|s| s.unwrap_or_else(|| Err(Error::invalid_input("internal: a job is missing"))))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn square_or_fail(n: u64) -> Result<u64> {
        match n {
            7 => Err(Error::format("column 7 cannot be encoded")),
            13 => panic!("column 13 panicked"),
            _ => {
                // uneven work, so that jobs finish out of order
                std::thread::sleep(std::time::Duration::from_millis((n % 3) * 2));
                Ok(n * n)
            }
        }
    }

    #[test]
    fn results_come_back_in_job_order_across_batches() {
        let pool = EncodePool::new(3, square_or_fail).unwrap();
        let tickets: Vec<_> = (0..5u64)
            .map(|b| {
                pool.submit((0..6).map(|i| 20 + b * 6 + i).collect())
                    .unwrap()
            })
            .collect();
        for (b, ticket) in tickets.into_iter().enumerate() {
            let want: Vec<u64> = (0..6).map(|i| (20 + b as u64 * 6 + i).pow(2)).collect();
            assert_eq!(ticket.wait().unwrap(), want);
        }
    }

    #[test]
    fn a_failing_job_is_its_batchs_error_and_others_go_on() {
        let pool = EncodePool::new(2, square_or_fail).unwrap();
        let bad = pool.submit(vec![1, 7, 2]).unwrap();
        let good = pool.submit(vec![3, 4]).unwrap();
        let e = bad.wait().unwrap_err();
        assert!(e.to_string().contains("column 7 cannot be encoded"), "{e}");
        assert_eq!(good.wait().unwrap(), vec![9, 16]);
    }

    #[test]
    fn a_panicking_job_is_an_error_not_a_hang() {
        let pool = EncodePool::new(2, square_or_fail).unwrap();
        let e = pool.submit(vec![2, 13]).unwrap().wait().unwrap_err();
        assert!(e.to_string().contains("column 13 panicked"), "{e}");
        // the worker survived the panic
        assert_eq!(pool.submit(vec![5]).unwrap().wait().unwrap(), vec![25]);
    }

    #[test]
    fn dropping_the_pool_with_queued_jobs_returns() {
        let pool = EncodePool::new(1, square_or_fail).unwrap();
        let tickets: Vec<_> = (0..50)
            .map(|_| pool.submit(vec![2, 5, 8]).unwrap())
            .collect();
        drop(pool);
        // every ticket answers (a result or an error), none waits forever
        for t in tickets {
            let _ = t.wait();
        }
    }
}
