//! The Artifact pane: file name, exact size (bytes, GB, GiB), shards, SHA-256 state,
//! density, and the per-encoding summary of an opened GGUF.

use crate::core::evaluate::ArtifactFigures;
use crate::core::units::{self, Provenance};
use crate::core::weights::WeightFile;
use crate::tui::app::PinnedArtifact;
use crate::tui::file::{FileState, HashState};
use crate::tui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

/// The Artifact pane.
pub struct ArtifactPane<'a> {
    /// The weight files of the scenario.
    pub weights: &'a [WeightFile],
    /// W and density.
    pub figures: &'a ArtifactFigures,
    /// The profile artifact.
    pub pinned: Option<&'a PinnedArtifact>,
    /// The opened file.
    pub file: &'a FileState,
    /// The file shown is the GGUF llama.cpp runs while the figures elsewhere are MLX-LM's (a
    /// folder or repository with both): the title says whose artifact it is.
    pub llama_cpp_beside_mlx: bool,
    /// Focused.
    pub focused: bool,
    /// Styles.
    pub theme: Theme,
}

fn short_hash(h: &str) -> String {
    if h.len() > 20 {
        format!("{}…{}", &h[..10], &h[h.len() - 8..])
    } else {
        h.to_string()
    }
}

/// A progress bar of `width` cells as text.
fn progress_text(done: u64, total: u64, width: usize) -> String {
    let filled = if total == 0 {
        0
    } else {
        ((done as u128 * width as u128) / total as u128) as usize
    };
    format!(
        "{}{}",
        "█".repeat(filled.min(width)),
        "░".repeat(width - filled.min(width))
    )
}

/// A parameter count as `32.8 B`, `270 M`.
fn params_text(p: u64) -> String {
    if p >= 1_000_000_000 {
        format!("{} B", units::trim_float(p as f64 / 1e9, 2))
    } else {
        format!("{} M", units::trim_float(p as f64 / 1e6, 1))
    }
}

/// A hashing rate: `718 MB/s`, `1.25 GB/s`.
fn rate_text(bytes_per_s: f64) -> String {
    if bytes_per_s >= 1e9 {
        format!("{:.2} GB/s", bytes_per_s / 1e9)
    } else {
        format!("{:.0} MB/s", bytes_per_s / 1e6)
    }
}

/// Seconds as `1m 05s` / `12s`.
pub fn fmt_eta(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    if s >= 60 {
        format!("{}m {:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

impl Widget for ArtifactPane<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let t = self.theme;
        let title = if self.llama_cpp_beside_mlx {
            "Artifact · llama.cpp's GGUF"
        } else {
            "Artifact"
        };
        let block = super::block(title, self.focused, t);
        let inner = block.inner(area);
        block.render(area, buf);
        let fig = self.figures;
        let mut lines: Vec<Line> = Vec::new();
        let loaded = self.file.loaded.as_ref();
        let name = match (loaded, self.pinned) {
            (Some(l), _) => l.file_name.clone(),
            (None, Some(p)) => p.file.clone(),
            (None, None) => self
                .weights
                .first()
                .map_or("no artifact".into(), |w| w.label()),
        };
        let source = if loaded.is_some() { "file" } else { "profile" };
        lines.push(Line::from(vec![
            Span::styled(name, t.heading()),
            Span::styled(format!("  {source}"), t.label()),
        ]));
        // A file the bounds refuse (a partial download, a header without the model's shape):
        // its own size and what it lacks, never the previous model's figures beside its name.
        if let (Some(l), Some(why)) = (loaded, self.file.refused.as_deref()) {
            let w = inner.width as usize;
            let missing = l.opened.artifact.missing_bytes();
            lines.push(Line::from(Span::styled(
                format!("{} bytes", units::group_digits(l.total_bytes as u128)),
                t.text(),
            )));
            if missing > 0 {
                lines.push(Line::from(Span::styled(
                    crate::tui::format::fit(
                        &format!(
                            "PARTIAL DOWNLOAD: {} bytes missing",
                            units::group_digits(missing as u128)
                        ),
                        w,
                    ),
                    t.bad(),
                )));
            }
            // the reason without the path the first line names (the message log has it whole)
            let path = format!("{}: ", l.path.display());
            let why = why.strip_prefix(&path).unwrap_or(why);
            lines.push(Line::from(Span::styled(
                crate::tui::format::fit(
                    &format!("✗ not for the bounds: {}", crate::sanitize::text(why)),
                    w,
                ),
                t.bad(),
            )));
            lines.push(Line::from(Span::styled(
                crate::tui::format::fit("the bounds keep the previous model (@)", w),
                t.label(),
            )));
        } else {
            // The real size on disk; a partial download says so beside it (W counts the
            // complete file its header describes).
            match loaded.filter(|l| l.total_bytes < fig.bytes) {
                Some(l) => lines.push(Line::from(vec![
                    Span::styled(
                        format!("{} bytes", units::group_digits(l.total_bytes as u128)),
                        t.text(),
                    ),
                    Span::raw("  "),
                    Span::styled(
                        format!(
                            "PARTIAL DOWNLOAD: {} bytes missing",
                            units::group_digits((fig.bytes - l.total_bytes) as u128)
                        ),
                        t.bad(),
                    ),
                ])),
                None => lines.push(Line::from(vec![
                    Span::styled(
                        format!("{} bytes", units::group_digits(fig.bytes as u128)),
                        t.text(),
                    ),
                    Span::raw("  "),
                    Span::styled(fig.provenance.label(), t.provenance(fig.provenance)),
                ])),
            }
            let shards = loaded.map_or(1, |l| l.shards.len());
            let mut size = vec![Span::styled(
                format!(
                    "{} · {}",
                    units::fmt_gb(fig.bytes),
                    units::fmt_gib(fig.bytes)
                ),
                t.text(),
            )];
            size.push(Span::styled(
                format!(" · {shards} shard{}", if shards == 1 { "" } else { "s" }),
                t.label(),
            ));
            // Files beside the artifact (projector, draft): never the artifact's own shards.
            let extras = self
                .weights
                .iter()
                .filter(|w| !matches!(w.kind, crate::core::weights::WeightKind::Artifact(_)))
                .count();
            if extras > 0 {
                size.push(Span::styled(format!(" + {extras} extra"), t.label()));
            }
            lines.push(Line::from(size));
            lines.push(self.hash_line(inner.width as usize));
            let density = match (fig.bits_per_parameter, fig.parameters) {
                (Some(b), Some(p)) => {
                    let how = if fig.parameters_counted {
                        "counted".to_string()
                    } else {
                        fig.parameters_provenance
                            .map_or("", |p| p.label())
                            .to_string()
                    };
                    let mut note = format!("({} params, {how})", params_text(p));
                    // At 80 columns the line is one too long: "params" goes, never the ")".
                    if format!("{b:.3} bits/param {note}").chars().count() > inner.width as usize {
                        note = format!("({}, {how})", params_text(p));
                    }
                    Line::from(vec![
                        Span::styled(format!("{b:.3}"), t.figure()),
                        Span::styled(" bits/param ", t.label()),
                        Span::styled(note, t.label()),
                    ])
                }
                _ => Line::from(Span::styled("density: parameter count unknown", t.label())),
            };
            lines.push(density);
        }
        match loaded {
            Some(l) => {
                // 39 columns, or 34 with a shorter count heading and b/w (80×24). MLX's
                // affine encodings go by their bits and group (`q4 g64`; the tensor view, t,
                // names them in full), and a type longer than its column takes it from the
                // count's, so every row keeps its b/w.
                let short = |name: &str| name.strip_prefix("affine ").unwrap_or(name).to_string();
                let narrow = inner.width < 39;
                let longest = (l.by_type.iter())
                    .map(|ty| short(&ty.type_name).chars().count())
                    .max()
                    .unwrap_or(0);
                let (tw, nw) = if narrow {
                    let tw = longest.max(5);
                    (tw, 9usize.saturating_sub(tw).max(3))
                } else {
                    let tw = longest.max(6);
                    (tw, 13usize.saturating_sub(tw).max(3))
                };
                let count_heading = if nw >= 7 { "tensors" } else { "n" };
                lines.push(Line::from(Span::styled(
                    if narrow {
                        format!(
                            "{:<tw$}{:>nw$} {:>11} {:>6} {:>5}",
                            "type", count_heading, "bytes", "share", "b/w"
                        )
                    } else {
                        format!(
                            "{:<tw$}{:>nw$} {:>11} {:>6} {:>6}",
                            "type", count_heading, "bytes", "share", "b/w"
                        )
                    },
                    t.label(),
                )));
                let room = (inner.height as usize).saturating_sub(lines.len());
                let n = l.by_type.len();
                let show = if n > room { room.saturating_sub(1) } else { n };
                for ty in l.by_type.iter().take(show) {
                    let name = short(&ty.type_name);
                    lines.push(Line::from(Span::styled(
                        if narrow {
                            format!(
                                "{:<tw$}{:>nw$} {:>11} {:>5.1}% {:>5}",
                                name,
                                ty.count,
                                crate::tui::format::bytes(ty.bytes),
                                ty.share * 100.0,
                                ty.bits_per_weight.map_or("—".into(), |b| format!("{b:.1}"))
                            )
                        } else {
                            format!(
                                "{:<tw$}{:>nw$} {:>11} {:>5.1}% {:>6}",
                                name,
                                ty.count,
                                crate::tui::format::bytes(ty.bytes),
                                ty.share * 100.0,
                                ty.bits_per_weight.map_or("—".into(), |b| format!("{b:.2}"))
                            )
                        },
                        t.text(),
                    )));
                }
                if show < n {
                    lines.push(Line::from(Span::styled(
                        format!("+{} more types: t lists every tensor", n - show),
                        t.label(),
                    )));
                }
            }
            None => {
                let q = self
                    .pinned
                    .map(|p| p.quantization.as_str())
                    .filter(|q| !q.is_empty());
                if let Some(q) = q {
                    lines.push(Line::from(vec![
                        Span::styled(format!("\"{q}\""), t.text()),
                        Span::styled(" mixes encodings: open the", t.label()),
                    ]));
                    lines.push(Line::from(Span::styled(
                        "GGUF (o) for the per-type summary",
                        t.label(),
                    )));
                } else {
                    lines.push(Line::from(Span::styled(
                        "open the GGUF (o) for its encodings",
                        t.label(),
                    )));
                }
                if let Some(p) = &self.file.opening {
                    lines.push(Line::from(Span::styled(
                        format!("opening {} …", p.display()),
                        t.warn(),
                    )));
                }
            }
        }
        Paragraph::new(lines).render(inner, buf);
    }
}

impl ArtifactPane<'_> {
    fn hash_line(&self, width: usize) -> Line<'static> {
        let t = self.theme;
        let pin = self.pinned.and_then(|p| p.sha256.clone());
        let label = Span::styled("SHA-256 ", t.label());
        match &self.file.hash {
            HashState::Running {
                done,
                total,
                bytes_per_s,
                eta_s,
            } => {
                let tail = format!(
                    " {}% {} {}",
                    self.file.hash.percent().unwrap_or(0),
                    rate_text(*bytes_per_s),
                    eta_s.map_or("".into(), |e| format!("ETA {}", fmt_eta(e)))
                );
                let bar_w = width.saturating_sub(8 + tail.chars().count()).clamp(4, 20);
                Line::from(vec![
                    label,
                    Span::styled(progress_text(*done, *total, bar_w), t.line_file()),
                    Span::styled(tail, t.label()),
                ])
            }
            HashState::Verified(h) => Line::from(vec![
                label,
                Span::styled("verified ", t.ok()),
                Span::styled(short_hash(h), t.label()),
            ]),
            HashState::Mismatch { actual, .. } => Line::from(vec![
                label,
                Span::styled("MISMATCH ", t.bad()),
                Span::styled(short_hash(actual), t.label()),
            ]),
            HashState::NotPinned(h) => Line::from(vec![
                label,
                Span::styled("not pinned ", t.warn()),
                Span::styled(short_hash(h), t.label()),
            ]),
            HashState::Cancelled => Line::from(vec![
                label,
                Span::styled("cancelled (Enter hashes)", t.warn()),
            ]),
            HashState::Failed(e) => Line::from(vec![label, Span::styled(e.clone(), t.bad())]),
            HashState::Idle => match (self.file.loaded.is_some(), pin) {
                (true, Some(_)) => Line::from(vec![
                    label,
                    Span::styled("pinned; Enter verifies", t.label()),
                ]),
                (true, None) => Line::from(vec![
                    label,
                    Span::styled("not pinned; Enter hashes", t.label()),
                ]),
                (false, Some(h)) => Line::from(vec![
                    label,
                    Span::styled("pinned ", t.provenance(Provenance::Spec)),
                    Span::styled(short_hash(&h), t.label()),
                ]),
                (false, None) => Line::from(vec![label, Span::styled("not pinned", t.label())]),
            },
        }
    }
}
