//! Preparing a cell (shell check, nesting bound, parse, module check, TypeScript strip) on a
//! preparation thread, never on an async worker.
//!
//! Preparation is CPU work proportional to the cell's size, so it must not run on the embedder's
//! async runtime: a big cell would hold a worker (and every task queued behind it) for as long as
//! it takes. Each preparation gets its own OS thread (an idle one when there is one), whose stack
//! is [`codemode_ts::PREPARE_STACK_BYTES`]: the most parsing a cell within
//! [`codemode_ts::MAX_NESTING`] can need. The async side waits for the result, the run's deadline
//! (preparation counts against `timeoutMs`) or an abort, whichever comes first; a preparation
//! that is given up on finishes in the background (it is linear in the cell's size) and its
//! result is dropped.
//!
//! A small cell (at most [`INLINE_BYTES`]) is prepared on the calling thread instead: its work is
//! bounded by its size (tens of microseconds), less than the two thread wake-ups a hand-off
//! costs, and a shallow cell parses within the calling thread's own stack (see
//! `codemode_ts::strip`). Its deadline and abort are checked when it is done.

use std::sync::Mutex;
use std::sync::mpsc;
use std::time::Instant;

use codemode_ts::{Language, StripOptions, StripReturn};
use tokio::sync::oneshot;

use crate::abort::AbortSignal;

/// Largest cell (UTF-8 bytes) prepared on the calling thread: a 39-line typical TypeScript cell
/// (~1.3 KB) strips in ~21 µs, so this bounds the time an async worker spends on it to roughly
/// 0.1 ms.
pub(crate) const INLINE_BYTES: usize = 4 << 10;

/// Idle preparation threads kept for the next cell.
const MAX_IDLE_THREADS: usize = 4;

/// How a preparation ended, when it did not produce a report.
#[derive(Debug)]
pub(crate) enum NotPrepared {
    /// The run's deadline passed first.
    Timeout,
    /// The call was aborted first.
    Aborted,
    /// No preparation thread could be started.
    Unavailable(String),
}

struct Job {
    code: String,
    language: Language,
    reply: oneshot::Sender<StripReturn>,
}

fn idle_threads() -> &'static Mutex<Vec<mpsc::Sender<Job>>> {
    static IDLE: std::sync::OnceLock<Mutex<Vec<mpsc::Sender<Job>>>> = std::sync::OnceLock::new();
    IDLE.get_or_init(Default::default)
}

fn worker(jobs: mpsc::Receiver<Job>, me: mpsc::Sender<Job>) {
    while let Ok(job) = jobs.recv() {
        let report = codemode_ts::strip(&job.code, &StripOptions::new(job.language));
        // The caller may have given up (deadline, abort): the report is then dropped.
        let _ = job.reply.send(report);
        let mut idle = idle_threads().lock().unwrap_or_else(|p| p.into_inner());
        if idle.len() >= MAX_IDLE_THREADS {
            return;
        }
        idle.push(me.clone());
    }
}

/// Hands a job to an idle preparation thread, or to a new one.
fn dispatch(mut job: Job) -> Result<(), String> {
    loop {
        let idle = idle_threads().lock().unwrap_or_else(|p| p.into_inner()).pop();
        let Some(tx) = idle else { break };
        match tx.send(job) {
            Ok(()) => return Ok(()),
            // That thread has ended; try the next one.
            Err(mpsc::SendError(back)) => job = back,
        }
    }
    let (tx, rx) = mpsc::channel::<Job>();
    let me = tx.clone();
    tx.send(job).map_err(|_| "the preparation thread stopped".to_owned())?;
    std::thread::Builder::new()
        .name("codemode-prepare".into())
        .stack_size(codemode_ts::PREPARE_STACK_BYTES + (1 << 20))
        .spawn(move || worker(rx, me))
        .map(drop)
        .map_err(|e| format!("cannot start a preparation thread: {e}"))
}

/// Prepares `code` on a preparation thread, giving up at `deadline` or when `abort` fires.
pub(crate) async fn prepare(
    code: String,
    language: Language,
    deadline: Instant,
    abort: &AbortSignal,
) -> Result<StripReturn, NotPrepared> {
    if code.len() <= INLINE_BYTES {
        let report = codemode_ts::strip(&code, &StripOptions::new(language));
        if abort.is_aborted() {
            return Err(NotPrepared::Aborted);
        }
        if Instant::now() >= deadline {
            return Err(NotPrepared::Timeout);
        }
        return Ok(report);
    }
    let (reply, report) = oneshot::channel();
    dispatch(Job { code, language, reply }).map_err(NotPrepared::Unavailable)?;
    tokio::select! {
        biased;
        _ = abort.aborted() => Err(NotPrepared::Aborted),
        report = report => report.map_err(|_| NotPrepared::Unavailable("the preparation thread stopped".into())),
        _ = tokio::time::sleep_until(deadline.into()) => Err(NotPrepared::Timeout),
    }
}
