//! Interruption (Ctrl-C, `SIGTERM`, `SIGHUP`) while output files are being
//! written: no temporary file or directory is left behind.
//!
//! Output files are written to a temporary name and renamed into place
//! (`atomic`), so an interrupted run never leaves a half-written file
//! under a final name. What it could leave is the temporary itself. To
//! prevent that, [`install`] starts one dedicated thread that waits for the
//! three signals (`signal_hook::iterator::Signals`), so no code of ours runs
//! in signal-handler context. On a signal that thread takes the registry lock,
//! removes every temporary still registered, and then ends the process by the
//! same signal (default action), so a shell sees the usual "killed by
//! SIGINT" status.
//!
//! A temporary is created (a new random name in the target's directory,
//! never an existing file or a symlink: see `atomic`) and registered
//! under the registry lock ([`create_file`], [`create_dir`]), and renamed
//! into place and unregistered under the same lock ([`Tracked::commit`]). Once the signal thread holds the
//! lock, no new temporary can appear and none can be half-committed: each one
//! either exists and is registered (and is removed), or is already in place.
//! A temporary directory is first renamed aside, so that files other threads
//! are still creating inside it by path cannot land in it, then removed.
//!
//! The handlers also set a flag when a signal is delivered; a command that
//! finishes while that flag is set waits for the signal thread ([`settle`]),
//! so that what followed the signal (its parent closing stdin, say) cannot
//! make it exit another way first. For that flag to be set in time, every
//! thread but the main one keeps the signals off ([`block_in_this_thread`]):
//! the main thread takes each one itself.
//!
//! A command that runs until it is stopped (`--watch`) calls
//! [`stop_gracefully`]: then the first signal only sets a flag
//! ([`stop_requested`]), which the command checks between its updates, so it
//! ends after the update under way (temporaries committed, exit status 0);
//! a second signal cleans up and ends the process as above.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use signal_hook::low_level::emulate_default_handler;

use promptinclude::artifact::temp;

/// The signals that trigger the cleanup.
const SIGNALS: [libc::c_int; 3] = [SIGINT, SIGTERM, SIGHUP];

/// Whether the first signal only asks the command to stop ([`stop_gracefully`]).
static GRACEFUL: AtomicBool = AtomicBool::new(false);

/// Whether a signal asked the command to stop.
static STOP: AtomicBool = AtomicBool::new(false);

/// Whether one of the signals has arrived: set by the handler itself, when
/// the signal is delivered, before the signal thread wakes ([`settle`]).
static RECEIVED: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// From now on the first interrupt signal only sets [`stop_requested`]; the
/// command must check it often and end on its own. A second signal cleans
/// up and ends the process.
pub fn stop_gracefully() {
    GRACEFUL.store(true, Ordering::SeqCst);
}

/// Whether an interrupt signal asked the command to stop (only after
/// [`stop_gracefully`]; before, a signal ends the process at once).
pub fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// Called when the command is done: if one of the signals arrived (and does
/// not only ask to stop), waits for the signal thread to end the process by
/// it. The signal came first, but the command can see what follows it
/// before that thread runs: a parent that sends `SIGTERM` and then closes
/// the command's stdin would otherwise see it exit with an error about the
/// closed input instead of ending by the signal.
pub fn settle() {
    let received = RECEIVED.get().is_some_and(|r| r.load(Ordering::SeqCst));
    if received && !GRACEFUL.load(Ordering::SeqCst) {
        loop {
            std::thread::park();
        }
    }
}

/// Keeps the interrupt signals off the calling thread, so that the kernel
/// delivers them to the main thread alone. Every thread the command starts
/// calls it first (the worker pools through their start hooks); threads
/// started by those inherit it.
///
/// Why: [`settle`] must see a signal that came before what followed it. A
/// signal taken by another thread runs its handlers there, and that thread
/// can be descheduled after taking it and before setting the flag, while
/// the main thread reads the end of its input and exits with an error
/// (seen once in CI, with the server stopped while both happened). Taken
/// by the main thread, the handlers run before its next instruction, so
/// the flag is set by the time it calls [`settle`].
pub fn block_in_this_thread() {
    // SAFETY: the set is initialised by sigemptyset before use, and
    // pthread_sigmask changes only the calling thread's mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in SIGNALS {
            libc::sigaddset(&mut set, sig);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// Starts the thread that handles the interrupt signals, and returns once
/// their handlers are in place.
///
/// Call it first thing in `main`, before any temporary exists. The thread
/// registers the handlers itself (`signal_hook`'s self-pipe: the handler
/// only writes a byte, no code of ours runs in signal-handler context), so if
/// it cannot be started or cannot register them, nothing is registered and
/// the signals keep their default behaviour. (Registering here and then
/// failing to start the thread would be worse: `signal_hook` cannot put the
/// default action back, so the signals would be ignored.)
///
/// Only the first call does anything (a host process may run the command
/// more than once).
pub fn install() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(start);
}

/// Starts the signal thread (see [`install`]).
fn start() {
    let (ready, registered) = std::sync::mpsc::sync_channel(0);
    let spawned = std::thread::Builder::new()
        .name("signals".to_string())
        .spawn(move || {
            // The handlers run in the main thread (`emulate_default_handler`
            // unblocks the signal here when it ends the process by it).
            block_in_this_thread();
            // sigaction fails only for an invalid signal number, so this
            // registers all three or, in theory, none.
            let Ok(mut signals) = Signals::new(SIGNALS) else {
                return;
            };
            // Only once the thread that ends the process is listening: a
            // signal seen here is always acted on.
            let received = RECEIVED.get_or_init(|| Arc::new(AtomicBool::new(false)));
            for sig in SIGNALS {
                let _ = signal_hook::flag::register(sig, Arc::clone(received));
            }
            let _ = ready.send(());
            for sig in signals.forever() {
                if GRACEFUL.load(Ordering::SeqCst) && !STOP.swap(true, Ordering::SeqCst) {
                    continue;
                }
                clean_up_and_die(sig);
            }
        });
    if spawned.is_ok() {
        // Err: the thread could not register the handlers (see above).
        let _ = registered.recv();
    }
}

/// Removes every registered temporary, then ends the process by `sig`.
fn clean_up_and_die(sig: libc::c_int) -> ! {
    // Held until the process ends: nothing can register or commit any more.
    let _held = temp::remove_all();
    // Restores the default action, unblocks `sig` and raises it, so the
    // process ends the way the signal normally ends it (a shell sees "killed
    // by SIGINT"); it returns only for a signal it does not know.
    let _ = emulate_default_handler(sig);
    std::process::exit(128 + sig)
}
