//! A sustained read bandwidth of system memory: every thread sums the u64 words of its own
//! buffer (allocated and first written by that thread), all threads released together, the
//! wall time of the slowest one counted. Several repetitions; best and median reported.

use std::hint::black_box;
use std::sync::{Arc, Barrier, mpsc};
use std::time::Instant;

/// What to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// Bytes read per repetition over all threads.
    pub buffer_bytes: u64,
    /// Timed repetitions.
    pub repetitions: u32,
    /// Threads (one buffer each).
    pub threads: usize,
}

/// The result of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct BandwidthRun {
    /// Bytes read per repetition over all threads (whole u64 words).
    pub bytes_per_repetition: u64,
    /// Threads.
    pub threads: usize,
    /// Each repetition's rate, bytes/s, in order.
    pub samples: Vec<f64>,
    /// The best repetition, bytes/s.
    pub best: f64,
    /// The median repetition, bytes/s.
    pub median: f64,
    /// The worst repetition, bytes/s.
    pub worst: f64,
    /// A debug build (debug assertions on; usually also unoptimised, and then not bandwidth-bound).
    pub unoptimized_build: bool,
}

/// Why the measurement could not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BandwidthError {
    /// A thread's buffer could not be allocated.
    #[error(
        "cannot allocate {bytes} bytes for the bandwidth test: try `--quick`, which reads a smaller buffer"
    )]
    Allocation {
        /// Bytes asked for.
        bytes: u64,
    },
    /// A measuring thread failed.
    #[error("a measuring thread stopped: {0}")]
    Thread(String),
}

/// Σ of the words with eight independent accumulators (the adds are never the bottleneck;
/// the loads are), wrapping so the compiler keeps every load.
pub fn sum_words(words: &[u64]) -> u64 {
    let mut acc = [0u64; 8];
    let mut it = words.chunks_exact(8);
    for c in &mut it {
        for i in 0..8 {
            acc[i] = acc[i].wrapping_add(c[i]);
        }
    }
    let mut s = it.remainder().iter().fold(0u64, |a, x| a.wrapping_add(*x));
    for a in acc {
        s = s.wrapping_add(a);
    }
    s
}

fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

enum Msg {
    Ready,
    Failed(u64),
}

/// Run the plan. `progress(fraction, message)` is called from this thread.
pub fn measure(
    plan: Plan,
    progress: &mut dyn FnMut(f64, &str),
) -> Result<BandwidthRun, BandwidthError> {
    let threads = plan.threads.max(1);
    let reps = plan.repetitions.max(1);
    let words_total = (plan.buffer_bytes / 8).max(threads as u64 * 8);
    let per_thread = (words_total / threads as u64) as usize;
    let bytes_per_rep = per_thread as u64 * threads as u64 * 8;
    let start = Arc::new(Barrier::new(threads + 1));
    let end = Arc::new(Barrier::new(threads + 1));
    let (tx, rx) = mpsc::channel::<Msg>();
    let mut samples = Vec::with_capacity(reps as usize);
    let result = std::thread::scope(|scope| -> Result<(), BandwidthError> {
        let mut handles = Vec::with_capacity(threads);
        for t in 0..threads {
            let (start, end, tx) = (Arc::clone(&start), Arc::clone(&end), tx.clone());
            handles.push(scope.spawn(move || {
                let mut buf: Vec<u64> = Vec::new();
                let ok = buf.try_reserve_exact(per_thread).is_ok();
                if ok {
                    // First touch by the reading thread (pages land on its NUMA node); values
                    // that are not zero, so no page can stay the shared zero page.
                    let seed = (t as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                    buf.extend((0..per_thread as u64).map(|i| i ^ seed));
                    let _ = tx.send(Msg::Ready);
                } else {
                    let _ = tx.send(Msg::Failed(per_thread as u64 * 8));
                }
                drop(tx);
                let mut sink = 0u64;
                // One untimed warm-up pass, then the timed ones; a failed allocation still
                // takes part in the barriers so nobody waits forever.
                for _ in 0..=reps {
                    start.wait();
                    if ok {
                        sink = sink.wrapping_add(sum_words(black_box(&buf[..])));
                    }
                    end.wait();
                }
                black_box(sink)
            }));
        }
        drop(tx);
        let mut ready = 0usize;
        let mut failed = None;
        for m in rx.iter() {
            match m {
                Msg::Ready => ready += 1,
                Msg::Failed(b) => failed = Some(b.saturating_mul(threads as u64)),
            }
            progress(
                0.3 * (ready as f64 / threads as f64),
                "writing the test buffers",
            );
        }
        for rep in 0..=reps {
            start.wait();
            let t0 = Instant::now();
            end.wait();
            let secs = t0.elapsed().as_secs_f64();
            if rep > 0 && failed.is_none() {
                samples.push(bytes_per_rep as f64 / secs.max(1e-9));
                progress(
                    0.3 + 0.7 * rep as f64 / reps as f64,
                    &format!("reading: repetition {rep} of {reps}"),
                );
            }
        }
        for h in handles {
            h.join()
                .map_err(|_| BandwidthError::Thread("a reader panicked".into()))?;
        }
        match failed {
            Some(bytes) => Err(BandwidthError::Allocation { bytes }),
            None => Ok(()),
        }
    });
    result?;
    let mut sorted = samples.clone();
    sorted.sort_by(f64::total_cmp);
    Ok(BandwidthRun {
        bytes_per_repetition: bytes_per_rep,
        threads,
        best: sorted.last().copied().unwrap_or(0.0),
        median: median(&sorted),
        worst: sorted.first().copied().unwrap_or(0.0),
        samples,
        unoptimized_build: cfg!(debug_assertions),
    })
}

/// Several runs as one: every repetition's sample in order, the best, median and worst over
/// all of them (the best of several runs is the figure kept: contention only lowers a rate).
pub fn best_of(runs: Vec<BandwidthRun>) -> Option<BandwidthRun> {
    let first = runs.first()?.clone();
    let samples: Vec<f64> = runs
        .iter()
        .flat_map(|r| r.samples.iter().copied())
        .collect();
    let mut sorted = samples.clone();
    sorted.sort_by(f64::total_cmp);
    Some(BandwidthRun {
        bytes_per_repetition: first.bytes_per_repetition,
        threads: first.threads,
        best: sorted.last().copied().unwrap_or(0.0),
        median: median(&sorted),
        worst: sorted.first().copied().unwrap_or(0.0),
        samples,
        unoptimized_build: first.unoptimized_build,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_every_word() {
        let v: Vec<u64> = (1..=21).collect();
        assert_eq!(sum_words(&v), 231);
        assert_eq!(sum_words(&[u64::MAX, 2]), 1);
        assert_eq!(sum_words(&[]), 0);
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[1.0, 2.0, 3.0]), 2.0);
        assert_eq!(median(&[1.0, 2.0, 3.0, 4.0]), 2.5);
    }

    #[test]
    fn small_run() {
        let mut calls = 0;
        let r = measure(
            Plan {
                buffer_bytes: 1 << 20,
                repetitions: 3,
                threads: 2,
            },
            &mut |f, _| {
                assert!((0.0..=1.0).contains(&f));
                calls += 1;
            },
        )
        .unwrap();
        assert_eq!(r.samples.len(), 3);
        assert_eq!(r.bytes_per_repetition, 1 << 20);
        assert!(r.best >= r.median && r.median >= r.worst && r.worst > 0.0);
        assert!(calls >= 3);
    }
}
