//! The wording of the capacity verdict and the runtime memory items, shared by the text,
//! markdown and JSON reports and the explorer. Depends on `core` only.

use crate::core::evaluate::{Capacity, FitVerdict};
use crate::core::tiers::MemoryItem;
use crate::core::units;

/// What the runtime's memory figures are and where they come from.
pub const BUFFERS_PROVENANCE: &str = "derived (llama.cpp model): output and compute buffers as llama.cpp's CPU backend reserves them; GPU backends reserve differently";

/// Short name of a memory item.
pub fn item(i: MemoryItem) -> &'static str {
    match i {
        MemoryItem::Model => "model",
        MemoryItem::Context => "cache",
        MemoryItem::Output => "output",
        MemoryItem::Compute => "compute",
        MemoryItem::User => "A",
    }
}

/// Longer name of a memory item, for sentences.
pub fn item_long(i: MemoryItem) -> &'static str {
    match i {
        MemoryItem::Model => "the weights",
        MemoryItem::Context => "the allocated cache",
        MemoryItem::Output => "the output buffer",
        MemoryItem::Compute => "the compute buffer",
        MemoryItem::User => "the other allocations A",
    }
}

/// The capacity verdict in words.
pub fn verdict(c: &Capacity) -> String {
    match &c.verdict {
        FitVerdict::Fits {
            user_counted: false,
        } => "fits if everything else stays within the free memory (cache and buffers counted, A = 0)".into(),
        FitVerdict::Fits { user_counted: true } => {
            "fits, with the runtime buffers and the other allocations counted".into()
        }
        FitVerdict::WillNotStart { refusals } => refusals
            .iter()
            .map(|r| r.to_string())
            .collect::<Vec<_>>()
            .join("; "),
        FitVerdict::DoesNotFit {
            shortfalls,
            article_fits,
        } => {
            let short: Vec<String> = shortfalls
                .iter()
                .map(|s| {
                    format!(
                        "{} is short by {} ({} tips it)",
                        s.tier,
                        units::bytes_gib(s.bytes),
                        item_long(s.overflows_at)
                    )
                })
                .collect();
            let mut v = format!("does not fit: {}", short.join("; "));
            if *article_fits {
                v.push_str("; W + K + A alone would fit: llama.cpp's cache padding and buffers decide");
            }
            v
        }
    }
}
