//! The walk's floor, for `scripts/bench-vs-reference`:
//! `syscall_floor [-j N] ROOT... | --roots-from FILE`.
//!
//! Lists the directories a default-config scan of the roots lists, doing only
//! `openat` + `getdents64` + `close` per directory on N threads (default: the
//! number of CPUs, as `promptinclude scan`), and prints how many it listed.
//! See `benches/support/floor.rs`.

#[path = "../benches/support/floor.rs"]
mod floor;

fn main() {
    let mut args = std::env::args().skip(1);
    let mut roots = Vec::new();
    let mut threads = 0;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-j" => threads = args.next().and_then(|n| n.parse().ok()).unwrap_or(0),
            "--roots-from" => {
                let file = args.next().unwrap_or_default();
                let text = std::fs::read_to_string(&file).unwrap_or_else(|e| {
                    eprintln!("syscall_floor: {file}: {e}");
                    std::process::exit(2)
                });
                roots.extend(text.lines().map(|l| l.as_bytes().to_vec()));
            }
            _ => roots.push(arg.into_bytes()),
        }
    }
    if roots.is_empty() {
        eprintln!("usage: syscall_floor [-j N] ROOT... | --roots-from FILE");
        std::process::exit(2);
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool");
    let listed = pool.install(|| floor::walk_floor(&roots));
    println!("{listed} directories listed");
}
