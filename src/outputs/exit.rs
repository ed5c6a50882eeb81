//! The process exit codes of the `llmbound` binary, defined once: the CLI returns them, the
//! man page and `docs/cli.md` list them from [`TABLE`].
//! Depends on: nothing.

/// Success (also a closed output pipe, `| head`).
pub const OK: i32 = 0;
/// Bad input or I/O: a value, file or profile that cannot be used (one line on stderr naming
/// it: the file, byte offset or TOML line).
pub const BAD_INPUT: i32 = 1;
/// Usage: the command line itself is wrong (clap's errors: an unknown flag, a missing or
/// conflicting option, a value of the wrong kind; and ours, such as `compare` with fewer than
/// two `--machine`). clap exits with this code too.
pub const USAGE: i32 = 2;
/// A claimed or observed decode rate above the highest ceiling (`check`, `bench`).
pub const IMPOSSIBLE: i32 = 3;
/// The file is not the artifact it should be: its SHA-256 differs from the pinned profile
/// (`hash`), or tensor data or shards of a split model are missing (`hash`, `inspect`).
pub const MISMATCH: i32 = 4;

/// The exit codes in one line, for the end of `llmbound --help`.
pub fn summary() -> String {
    "Exit codes: 0 success, 1 bad input or I/O, 2 usage, 3 a rate above the highest ceiling, \
     4 not the artifact (SHA-256 mismatch, incomplete file). `llmbound man` prints the manual \
     with every command."
        .to_string()
}

/// Every exit code with its meaning, in order, for the man page and the documentation.
pub const TABLE: &[(i32, &str)] = &[
    (OK, "success"),
    (
        BAD_INPUT,
        "bad input or I/O: a value, file or profile that cannot be used (one line on stderr naming the file, byte offset or TOML line, and what to do)",
    ),
    (
        USAGE,
        "usage: the command line is wrong (an unknown flag or command, a missing or conflicting option, a value of the wrong kind, compare with fewer than two --machine)",
    ),
    (
        IMPOSSIBLE,
        "a claimed or observed decode rate is above the highest ceiling (check, bench)",
    ),
    (
        MISMATCH,
        "the file is not the artifact it should be: its SHA-256 differs from the pinned profile (hash), or tensor data or split shards are missing (hash, inspect)",
    ),
];
