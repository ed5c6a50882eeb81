//! Named differences from llama.cpp's own dry run: a figure `core::placement` does not reach,
//! kept with its measured error and the reason, so that every other figure is asserted and the
//! list cannot go stale (an entry that now matches, or whose figures moved, fails the test).

/// A compute buffer that differs from llama.cpp's by more than the band.
#[derive(Debug)]
pub struct KnownCompute {
    /// The case as the test names it (model, case id, tag).
    pub case: &'static str,
    /// `dev0`, `dev1`, … or `host` (Vulkan: `device`, `host`).
    pub buffer: &'static str,
    /// llmbound's figure when the entry was measured, MiB.
    pub ours_mib: f64,
    /// llama.cpp's figure, MiB.
    pub llama_cpp_mib: f64,
    /// Why the scheduler model does not reach it.
    pub reason: &'static str,
}

/// A `-fit` plan whose arguments differ from llama.cpp's.
#[derive(Debug)]
pub struct KnownFit {
    /// The case as the test names it.
    pub case: &'static str,
    /// Why.
    pub reason: &'static str,
}

const MIB: f64 = (1u64 << 20) as f64;

/// Check the buffers found out of the band, `(case, buffer, ours, llama.cpp's)` in bytes,
/// against the named list: every one must be listed with the figures it was measured at (within
/// 0.1 MiB), and every listed one must still be out of the band. Returns the problems.
#[allow(dead_code)]
pub fn check_compute(found: &[(String, String, u64, u64)], known: &[KnownCompute]) -> Vec<String> {
    let mut problems = Vec::new();
    for (case, buf, got, want) in found {
        match known
            .iter()
            .find(|k| k.case == case.as_str() && k.buffer == buf.as_str())
        {
            None => problems.push(format!(
                "{case} {buf}: compute {:.2} MiB, llama.cpp {:.2} MiB: out of the band and not in the named list",
                *got as f64 / MIB,
                *want as f64 / MIB
            )),
            Some(k) => {
                let (g, w) = (*got as f64 / MIB, *want as f64 / MIB);
                if (g - k.ours_mib).abs() > 0.1 || (w - k.llama_cpp_mib).abs() > 0.1 {
                    problems.push(format!(
                        "{case} {buf}: compute {g:.2} MiB, llama.cpp {w:.2} MiB; the named list says {:.2} / {:.2} ({}): update the entry",
                        k.ours_mib, k.llama_cpp_mib, k.reason
                    ));
                }
            }
        }
    }
    for k in known {
        let listed = found
            .iter()
            .any(|(c, b, _, _)| c.as_str() == k.case && b.as_str() == k.buffer);
        if !listed {
            problems.push(format!(
                "{} {}: in the named list but not out of the band (within it now, or no such case): remove the entry",
                k.case, k.buffer
            ));
        }
    }
    problems
}

/// Check the differing fit plans against the named list, both ways.
#[allow(dead_code)]
pub fn check_fits(found: &[String], known: &[KnownFit]) -> Vec<String> {
    let mut problems = Vec::new();
    for case in found {
        if !known.iter().any(|k| k.case == case.as_str()) {
            problems.push(format!(
                "{case}: fit arguments differ and the case is not in the named list"
            ));
        }
    }
    for k in known {
        if !found.iter().any(|c| c.as_str() == k.case) {
            problems.push(format!(
                "{}: in the named list of differing plans ({}) but identical now: remove the entry",
                k.case, k.reason
            ));
        }
    }
    problems
}
