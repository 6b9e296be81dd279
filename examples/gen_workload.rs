//! Generates a benchmark workload: `gen_workload W1|W2|W3|W4|W5 DIR`.
//! W2 and W5 print their root paths, one per line. See `benches/support/workload.rs`.

#[path = "../benches/support/workload.rs"]
mod workload;

use std::path::Path;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(kind), Some(dir)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: gen_workload W1|W2|W3|W4|W5 DIR");
        std::process::exit(2);
    };
    let dir = Path::new(dir);
    match kind.as_str() {
        "W1" => workload::w1(dir),
        "W2" => {
            for root in workload::w2(dir, 200) {
                println!("{}", root.display());
            }
        }
        "W3" => workload::w3(dir),
        "W4" => workload::w4(dir),
        "W5" => {
            for root in workload::w5(dir) {
                println!("{}", root.display());
            }
        }
        other => {
            eprintln!("unknown workload {other}");
            std::process::exit(2);
        }
    }
}
