//! Text and Markdown forms of a `BenchReport`: the same tables, aligned for a terminal or as
//! Markdown. Every throughput is labelled observed or ceiling; efficiencies are percentages.
//! Formats numbers with `core::units`; no arithmetic beyond ratios already in the report. A
//! row's verdict is worded by `report::words::claim_sentence`, the sentence `check` and the
//! explorer print.

use super::eval::{BandwidthFigure, BenchReport, DecodeComparison, RowOutcome, RowReport};
use super::parse::TestKind;
use crate::core::claim::Verdict;
use crate::core::roofline::PrefillBound;
use crate::core::units::{self, BytesPerSec};
use crate::report::words;
use std::fmt::{self, Write as _};
use std::io::{self, Write};

#[derive(Clone, Copy, PartialEq)]
enum Align {
    Left,
    Right,
}

/// A table's cells in one buffer (a `String` and a `Vec` per cell made 200,000 rows cost
/// millions of allocations and hundreds of megabytes).
struct Table {
    headers: Vec<(&'static str, Align)>,
    /// Every cell's text, one after another, row by row.
    buf: String,
    /// Where each cell ends in `buf` (`headers.len()` cells a row).
    ends: Vec<usize>,
}

impl Table {
    fn new(headers: Vec<(&'static str, Align)>) -> Table {
        Table {
            headers,
            buf: String::new(),
            ends: Vec::new(),
        }
    }

    /// The next cell (rows are filled cell by cell, in column order).
    fn cell(&mut self, c: impl fmt::Display) {
        let _ = write!(self.buf, "{c}");
        self.ends.push(self.buf.len());
    }

    /// The rows, each an iterator over its cells.
    fn rows(&self) -> impl Iterator<Item = impl Iterator<Item = &str>> {
        let n = self.headers.len().max(1);
        self.ends.chunks(n).enumerate().map(move |(r, ends)| {
            let mut start = if r == 0 { 0 } else { self.ends[r * n - 1] };
            ends.iter().map(move |&end| {
                let c = &self.buf[start..end];
                start = end;
                c
            })
        })
    }

    fn text(&self, w: &mut impl Write) -> io::Result<()> {
        let n = self.headers.len();
        let mut width: Vec<usize> = self
            .headers
            .iter()
            .map(|(h, _)| h.chars().count())
            .collect();
        for r in self.rows() {
            for (i, c) in r.enumerate().take(n) {
                width[i] = width[i].max(chars(&safe_text(c)));
            }
        }
        let mut s = String::new();
        let mut line =
            |cells: &mut dyn Iterator<Item = &str>, w: &mut dyn Write| -> io::Result<()> {
                s.clear();
                s.push(' ');
                for (i, c) in cells.enumerate() {
                    let c = safe_text(c);
                    let pad = width[i].saturating_sub(chars(&c));
                    s.push(' ');
                    match self.headers[i].1 {
                        Align::Left => {
                            s.push_str(&c);
                            if i + 1 < n {
                                s.extend(std::iter::repeat_n(' ', pad));
                            }
                        }
                        Align::Right => {
                            s.extend(std::iter::repeat_n(' ', pad));
                            s.push_str(&c);
                        }
                    }
                    if i + 1 < n {
                        s.push(' ');
                    }
                }
                writeln!(w, "{}", s.trim_end())
            };
        line(&mut self.headers.iter().map(|(h, _)| *h), w)?;
        for mut r in self.rows() {
            line(&mut r, w)?;
        }
        Ok(())
    }

    fn markdown(&self, w: &mut impl Write) -> io::Result<()> {
        let esc = |s: &str| crate::sanitize::markdown(s).into_owned();
        writeln!(
            w,
            "| {} |",
            self.headers
                .iter()
                .map(|(h, _)| esc(h))
                .collect::<Vec<_>>()
                .join(" | ")
        )?;
        writeln!(
            w,
            "|{}|",
            self.headers
                .iter()
                .map(|(_, a)| if *a == Align::Right { "---:" } else { "---" })
                .collect::<Vec<_>>()
                .join("|")
        )?;
        let mut s = String::new();
        for r in self.rows() {
            s.clear();
            s.push_str("| ");
            for (i, c) in r.enumerate() {
                if i > 0 {
                    s.push_str(" | ");
                }
                s.push_str(&crate::sanitize::markdown(c));
            }
            s.push_str(" |\n");
            w.write_all(s.as_bytes())?;
        }
        Ok(())
    }
}

/// A cell as `sanitize::text` shows it; printable ASCII (most cells) is shown as it is, found
/// without decoding characters.
fn safe_text(c: &str) -> std::borrow::Cow<'_, str> {
    if c.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        std::borrow::Cow::Borrowed(c)
    } else {
        crate::sanitize::text(c)
    }
}

/// Characters in `s` (its length when ASCII).
fn chars(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.chars().count()
    }
}

/// `1–3, 5` for rows [1, 2, 3, 5].
pub fn row_ranges(rows: &[usize]) -> String {
    let mut v = rows.to_vec();
    v.sort_unstable();
    v.dedup();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let start = v[i];
        let mut end = start;
        while i + 1 < v.len() && v[i + 1] == end + 1 {
            i += 1;
            end = v[i];
        }
        out.push(if end == start {
            start.to_string()
        } else {
            format!("{start}–{end}")
        });
        i += 1;
    }
    out.join(", ")
}

fn pct(x: Option<f64>) -> String {
    x.map_or("—".into(), |x| format!("{:.1}%", x * 100.0))
}

fn rate(x: Option<f64>) -> String {
    x.map_or("—".into(), units::fmt_rate)
}

fn bw_text(b: &BandwidthFigure) -> String {
    format!(
        "{} ({}, tier \"{}\")",
        units::fmt_bandwidth(BytesPerSec(b.bytes_per_second)),
        b.provenance,
        b.tier
    )
}

fn ngl(n: Option<i64>) -> String {
    match n {
        None => "—".into(),
        Some(n) if n < 0 => "all".into(),
        Some(n) => n.to_string(),
    }
}

fn opt<T: ToString>(x: Option<T>) -> String {
    x.map_or("—".into(), |v| v.to_string())
}

/// A decode row's verdict in words: the claim vocabulary `check` and the explorer use
/// (`report::words::claim_sentence`), and the import's own case of a run on another artifact.
pub fn row_verdict(d: &DecodeComparison) -> String {
    let highest = d.ceiling.as_ref().or(d.ceiling_without_inventory.as_ref());
    let h = highest.map_or(0.0, |c| c.tokens_per_second);
    let outcome = match d.outcome {
        RowOutcome::Claim(o) => o,
        RowOutcome::OtherArtifact => {
            return format!(
                "above the highest ceiling ({} tokens/s) but the run's artifact differs from the scenario's: not judged",
                units::fmt_rate(h)
            );
        }
    };
    words::claim_sentence(&Verdict {
        outcome,
        tokens_per_second: d.observed_tokens_per_second,
        // llama-bench rows are one sequence.
        sequences: 1,
        context_tokens: d.context_tokens,
        highest_tokens_per_second: h,
        highest_short_tokens_per_second: None,
        highest_bandwidth: units::BytesPerSec(
            highest.map_or(0.0, |c| c.bandwidth.bytes_per_second),
        ),
        max_context_tokens: d.max_context_tokens,
        exceeded: d
            .exceeded
            .iter()
            .map(|e| (e.kind, e.context_tokens))
            .collect(),
    })
}

fn short_verdict(r: &RowReport) -> String {
    if let Some(e) = &r.error {
        return format!("not evaluated: {e}");
    }
    let Some(d) = &r.decode else {
        return String::new();
    };
    if d.impossible {
        "IMPOSSIBLE".into()
    } else if d.above_measured_ceiling {
        "above the measured ceiling (not impossible)".into()
    } else if !d.within_ceiling && d.ceiling.is_none() {
        "above (no inventory: undecided)".into()
    } else if !d.within_ceiling {
        "above (artifact differs: not judged)".into()
    } else if !d.exceeded.is_empty() {
        "above a lower ceiling".into()
    } else {
        "within".into()
    }
}

fn show_headline(r: &BenchReport) -> bool {
    match (&r.bandwidth, &r.headline_bandwidth) {
        (Some(a), Some(b)) => a.bytes_per_second != b.bytes_per_second,
        _ => false,
    }
}

fn decode_table(r: &BenchReport) -> Table {
    let headline = show_headline(r);
    let mut headers = vec![
        ("#", Align::Right),
        ("test", Align::Left),
        ("K/V", Align::Left),
        ("fa", Align::Left),
        ("ngl", Align::Right),
        ("thr", Align::Right),
        ("retained", Align::Right),
        ("observed t/s", Align::Right),
        ("best t/s", Align::Right),
        ("ceiling t/s", Align::Right),
        ("efficiency", Align::Right),
    ];
    if headline {
        headers.push(("ceiling at headline BW t/s", Align::Right));
        headers.push(("eff. (headline)", Align::Right));
    }
    headers.push(("file ceiling t/s", Align::Right));
    headers.push(("verdict", Align::Left));
    let mut t = Table::new(headers);
    for (i, x) in r.rows.iter().enumerate() {
        if x.test != TestKind::Generation {
            continue;
        }
        let d = x.decode.as_ref();
        let highest = d.and_then(|d| d.ceiling.as_ref().or(d.ceiling_without_inventory.as_ref()));
        let mut ceiling = rate(highest.map(|c| c.tokens_per_second));
        if d.is_some_and(|d| d.ceiling.is_none()) {
            ceiling.push_str(" (file bytes)");
        }
        t.cell(i + 1);
        t.cell(&x.name);
        t.cell(format_args!("{}/{}", x.type_k, x.type_v));
        t.cell(opt(x.flash_attn));
        t.cell(ngl(x.n_gpu_layers));
        t.cell(opt(x.n_threads));
        t.cell(x.retained_tokens.map_or("—".into(), units::fmt_tokens));
        t.cell(units::fmt_rate(x.observed_tokens_per_second));
        t.cell(rate(x.best_sample_tokens_per_second));
        t.cell(ceiling);
        t.cell(pct(d.and_then(|d| d.efficiency)));
        if headline {
            t.cell(rate(
                d.and_then(|d| d.headline_ceiling.as_ref())
                    .map(|c| c.tokens_per_second),
            ));
            t.cell(pct(d.and_then(|d| d.headline_efficiency)));
        }
        t.cell(rate(d.map(|d| d.file_ceiling.tokens_per_second)));
        t.cell(short_verdict(x));
    }
    t
}

fn prefill_table(r: &BenchReport) -> Table {
    let headers = vec![
        ("#", Align::Right),
        ("test", Align::Left),
        ("K/V", Align::Left),
        ("thr", Align::Right),
        ("observed t/s", Align::Right),
        ("best t/s", Align::Right),
        ("intensity FLOP/B", Align::Right),
        ("prefill ceiling t/s", Align::Right),
        ("efficiency", Align::Right),
    ];
    let mut t = Table::new(headers);
    for (i, x) in r.rows.iter().enumerate() {
        if x.test != TestKind::Prompt {
            continue;
        }
        let p = x.prefill.as_ref();
        t.cell(i + 1);
        t.cell(&x.name);
        t.cell(format_args!("{}/{}", x.type_k, x.type_v));
        t.cell(opt(x.n_threads));
        t.cell(units::fmt_rate(x.observed_tokens_per_second));
        t.cell(rate(x.best_sample_tokens_per_second));
        t.cell(p.map_or("—".into(), |p| units::grouped(p.intensity, 1)));
        t.cell(match p {
            Some(p) => p
                .ceiling_tokens_per_second
                .map_or("none".into(), units::fmt_rate),
            None => x
                .error
                .as_ref()
                .map_or("—".into(), |e| format!("not evaluated: {e}")),
        });
        t.cell(pct(p.and_then(|p| p.efficiency)));
    }
    t
}

fn combined_table(r: &BenchReport) -> Table {
    let headers = vec![
        ("#", Align::Right),
        ("test", Align::Left),
        ("K/V", Align::Left),
        ("observed t/s (prompt + generated)", Align::Right),
        ("best t/s", Align::Right),
    ];
    let mut t = Table::new(headers);
    for (i, x) in r.rows.iter().enumerate() {
        if x.test != TestKind::Combined {
            continue;
        }
        t.cell(i + 1);
        t.cell(&x.name);
        t.cell(format_args!("{}/{}", x.type_k, x.type_v));
        t.cell(units::fmt_rate(x.observed_tokens_per_second));
        t.cell(rate(x.best_sample_tokens_per_second));
    }
    t
}

#[derive(Clone, Copy, PartialEq)]
enum Style {
    Text,
    Markdown,
}

fn heading(w: &mut impl Write, style: Style, s: &str) -> io::Result<()> {
    match style {
        Style::Text => writeln!(w, "\n{}", crate::sanitize::Text(s)),
        Style::Markdown => writeln!(w, "\n## {}\n", crate::sanitize::Text(s)),
    }
}

fn item(w: &mut impl Write, style: Style, s: &str) -> io::Result<()> {
    match style {
        Style::Text => writeln!(w, "  {}", crate::sanitize::Text(s)),
        Style::Markdown => writeln!(w, "- {}", crate::sanitize::Text(s)),
    }
}

fn table(w: &mut impl Write, style: Style, t: &Table) -> io::Result<()> {
    match style {
        Style::Text => t.text(w),
        Style::Markdown => t.markdown(w),
    }
}

/// The import's headline: the one sentence every front end shows above the rows (the text
/// and markdown reports, the explorer's bench view and its status line), so a header never
/// contradicts the verdicts under it.
pub fn headline(r: &BenchReport) -> String {
    let tg = r.rows.iter().filter(|x| x.decode.is_some()).count();
    if r.impossible_rows > 0 {
        format!(
            "IMPOSSIBLE: {} of {tg} decode rows are above their highest ceiling; the assumptions listed for them cannot all hold (exit code 3)",
            r.impossible_rows
        )
    } else if r.rows_above_measured_ceiling > 0 {
        format!(
            "{} of {tg} decode rows are above the measured ceiling: the measured bandwidth does not describe this path (no peak bandwidth is on record, so not impossible; add the memory's peak to decide)",
            r.rows_above_measured_ceiling
        )
    } else if r.rows_above_without_inventory > 0 {
        format!(
            "{} of {tg} decode rows are above every ceiling computed from file bytes; without the GGUF's tensor inventory that cannot be called impossible",
            r.rows_above_without_inventory
        )
    } else if r.rows_above_other_artifact > 0 {
        format!(
            "{} of {tg} decode rows are above their highest ceiling, but their run used another artifact than the scenario's: not judged",
            r.rows_above_other_artifact
        )
    } else if r.rows_above_lower_ceiling > 0 {
        format!(
            "every decode row is below its highest ceiling; {} are above a lower ceiling (an assumption of that ceiling is false)",
            r.rows_above_lower_ceiling
        )
    } else if tg > 0 {
        format!("all {tg} decode rows are below every ceiling")
    } else {
        "no decode (tg) rows to hold against a decode ceiling".into()
    }
}

fn write(r: &BenchReport, w: &mut impl Write, style: Style) -> io::Result<()> {
    let title = "llama-bench import: observed rates against bounds (ceilings, not predictions)";
    match style {
        Style::Text => writeln!(w, "{title}")?,
        Style::Markdown => writeln!(w, "# {title}\n")?,
    }
    let n = r.rows.len();
    item(
        w,
        style,
        &format!("Files: {} ({n} rows)", r.files.join(", ")),
    )?;
    item(w, style, &format!("Scenario: {}", r.scenario))?;
    item(
        w,
        style,
        &format!("Machine: {} ({})", r.machine_id, r.machine_name),
    )?;
    let inv = if r.from_gguf {
        "model shape and tensor inventory read from the GGUF"
    } else if r.has_inventory {
        "tensor inventory known"
    } else {
        "profile figures, no tensor inventory: no rate can be called impossible (give the GGUF)"
    };
    item(
        w,
        style,
        &format!("Model: {}; artifact {} ({inv})", r.model, r.artifact),
    )?;
    for a in &r.artifacts {
        let mark = if a.matches { "matches" } else { "DIFFERS" };
        item(
            w,
            style,
            &format!(
                "Artifact {mark} (rows {}): {}",
                row_ranges(&a.rows),
                a.detail
            ),
        )?;
    }
    if let Some(b) = &r.bandwidth {
        item(
            w,
            style,
            &format!(
                "Bandwidth of the highest ceilings (highest on record): {}; source: {}",
                bw_text(b),
                b.source
            ),
        )?;
    }
    if show_headline(r)
        && let Some(h) = &r.headline_bandwidth
    {
        item(
            w,
            style,
            &format!(
                "Headline bandwidth (measured when the profile has one): {}; source: {}",
                bw_text(h),
                h.source
            ),
        )?;
    }

    let tg: Vec<&RowReport> = r
        .rows
        .iter()
        .filter(|x| x.test == TestKind::Generation)
        .collect();
    if !tg.is_empty() {
        heading(
            w,
            style,
            "Decode (tg): observed rate against the decode ceiling at the retained mean n_depth + n_gen/2, one sequence",
        )?;
        table(w, style, &decode_table(r))?;
        writeln!(w)?;
        item(
            w,
            style,
            "ceiling = inventory bytes per token (the tensors a token reads) and the highest bandwidth on record: the only ceiling that can call a rate impossible; efficiency = observed / ceiling",
        )?;
        item(
            w,
            style,
            "file ceiling = every byte of the file per token at the headline bandwidth (the conservative proxy); a rate above it only shows that not every file byte is read per token",
        )?;
        for (i, x) in r.rows.iter().enumerate() {
            let Some(d) = &x.decode else { continue };
            if d.within_ceiling && d.exceeded.is_empty() {
                continue;
            }
            item(
                w,
                style,
                &format!("row {} ({}): {}", i + 1, x.name, row_verdict(d)),
            )?;
            for e in &d.exceeded {
                item(
                    w,
                    style,
                    &format!(
                        "  above the {} ceiling ({} tokens/s) ⇒ one of these is false: {}",
                        words::ceiling_name(e.kind, e.context_tokens),
                        units::fmt_rate(e.tokens_per_second),
                        words::assumptions(&e.assumptions).join("; ")
                    ),
                )?;
            }
            if !d.assumptions.is_empty() {
                item(
                    w,
                    style,
                    &format!(
                        "  above the highest ceiling ⇒ one of these is false: {}",
                        words::assumptions(&d.assumptions).join("; ")
                    ),
                )?;
            }
        }
    }

    let pp: Vec<&RowReport> = r
        .rows
        .iter()
        .filter(|x| x.test == TestKind::Prompt)
        .collect();
    if !pp.is_empty() {
        heading(w, style, "Prefill (pp): observed rate against the roofline")?;
        table(w, style, &prefill_table(r))?;
        let mut reasons: Vec<String> = Vec::new();
        for x in &pp {
            if let Some(p) = &x.prefill {
                let reason = words::prefill_bound(p.bound, p.prompt_rows, &p.compute_path);
                let text = if p.bound == PrefillBound::NoComputeRate {
                    format!("no prefill ceiling — {reason}; intensity and direction only")
                } else {
                    reason
                };
                if !reasons.contains(&text) {
                    reasons.push(text);
                }
            }
        }
        writeln!(w)?;
        for text in &reasons {
            item(w, style, text)?;
        }
    }

    let pg: Vec<&RowReport> = r
        .rows
        .iter()
        .filter(|x| x.test == TestKind::Combined)
        .collect();
    if !pg.is_empty() {
        heading(w, style, "Combined (pg): observed only")?;
        table(w, style, &combined_table(r))?;
        writeln!(w)?;
        item(
            w,
            style,
            "avg_ts of a pg test counts prompt and generated tokens over the whole run: it is never compared with a decode ceiling",
        )?;
    }

    let notes: Vec<_> = r
        .notes
        .iter()
        .filter(|n| !n.text.starts_with("pg: "))
        .collect();
    if !notes.is_empty() {
        heading(w, style, "Notes")?;
        for n in notes {
            item(
                w,
                style,
                &format!("rows {}: {}", row_ranges(&n.rows), n.text),
            )?;
        }
    }

    heading(w, style, "Measurement record (docs/bounds.md §8)")?;
    for f in &r.record_present {
        item(
            w,
            style,
            &format!(
                "present: {}: {} ({})",
                f.field,
                f.value.as_deref().unwrap_or(""),
                f.note
            ),
        )?;
    }
    for f in &r.record_missing {
        item(w, style, &format!("MISSING: {} — {}", f.field, f.note))?;
    }

    heading(w, style, "Verdict")?;
    item(w, style, &headline(r))?;
    item(
        w,
        style,
        "a ceiling bounds what any runtime can reach; it does not predict what one will reach, and a rate below it identifies no cause",
    )?;
    Ok(())
}

/// Write the report as aligned text for a terminal.
pub fn write_text(r: &BenchReport, w: &mut impl Write) -> io::Result<()> {
    buffered(w, |b| write(r, b, Style::Text))
}

/// Write the report as Markdown.
pub fn write_markdown(r: &BenchReport, w: &mut impl Write) -> io::Result<()> {
    buffered(w, |b| write(r, b, Style::Markdown))
}

/// Run `f` on a buffer of its own over `w`: the report is written in many small pieces, and
/// the caller's writer is often a `dyn Write` that would take each through a call.
fn buffered<W: Write>(
    w: &mut W,
    f: impl FnOnce(&mut io::BufWriter<&mut W>) -> io::Result<()>,
) -> io::Result<()> {
    let mut b = io::BufWriter::with_capacity(64 * 1024, w);
    f(&mut b)?;
    b.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(row_ranges(&[1, 2, 3, 5]), "1–3, 5");
        assert_eq!(row_ranges(&[4]), "4");
        assert_eq!(row_ranges(&[]), "");
        assert_eq!(row_ranges(&[2, 1, 7, 8]), "1–2, 7–8");
    }
}
