//! A skipped test says so where `cargo test` shows it. libtest captures `eprintln!` of a
//! passing test, so a skip printed with it is never seen; `skipped!` writes to the process's
//! standard error directly, which the capture does not take.

/// Print "SKIPPED: …" (format arguments as `eprintln!`) where `cargo test` shows it.
#[allow(unused_macros)]
macro_rules! skipped {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let msg = format!($($arg)*);
        let msg = msg
            .trim_start_matches("SKIPPED: ")
            .trim_start_matches("skipped: ")
            .trim_start_matches("note: ");
        let _ = writeln!(std::io::stderr().lock(), "SKIPPED: {msg}");
    }};
}
