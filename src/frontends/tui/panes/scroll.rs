//! Scrolling a pane in whole blocks: a block is one logical line with all its wrapped rows,
//! or a table with its header, or a list with its lead-in. A page shows whole blocks only (a
//! block taller than the page is the one exception, cut at the page's foot and marked); the
//! scroll position is the index of the first block shown, it stops where the last block is in
//! view, and the pane's title says how many rows are above and below (`↑ 3 more ↓ 5 more`).

use ratatui::text::Line;

/// Lines that scroll together.
#[derive(Debug, Clone, Default)]
pub struct Block {
    /// The block's rows, already wrapped to the page's width.
    pub lines: Vec<Line<'static>>,
}

impl Block {
    /// One logical line wrapped to `width`: its rows never part at the fold.
    pub fn wrapped(line: Line<'static>, width: u16) -> Block {
        Block {
            lines: super::wrap_line(line, width),
        }
    }
    /// Several logical lines (a table and its header, a list and its lead-in) wrapped to
    /// `width`, kept together.
    pub fn group(lines: Vec<Line<'static>>, width: u16) -> Block {
        Block {
            lines: lines
                .into_iter()
                .flat_map(|l| super::wrap_line(l, width))
                .collect(),
        }
    }
}

/// What a page of blocks shows at a scroll position.
#[derive(Debug, Clone, Default)]
pub struct Page {
    /// The rows shown, top to bottom.
    pub lines: Vec<Line<'static>>,
    /// Rows above the page.
    pub above: usize,
    /// Rows below the page.
    pub below: usize,
    /// The scroll position used (the one asked for, stopped at `last`).
    pub first: usize,
    /// The last useful scroll position: from it on, every remaining block is in view.
    pub last: usize,
}

impl Page {
    /// The title's mark: `↑ N more`, `↓ N more`, both, or nothing.
    pub fn mark(&self) -> String {
        let mut parts = Vec::new();
        if self.above > 0 {
            parts.push(format!("↑ {} more", self.above));
        }
        if self.below > 0 {
            parts.push(format!("↓ {} more", self.below));
        }
        parts.join(" ")
    }
}

/// The page of `blocks` that `height` rows show from block `scroll` on.
pub fn page(blocks: &[Block], height: usize, scroll: usize) -> Page {
    let total: usize = blocks.iter().map(|b| b.lines.len()).sum();
    // The last position worth scrolling to: the first block from which the rest fits.
    let mut last = blocks.len().saturating_sub(1);
    let mut tail = 0usize;
    for (i, b) in blocks.iter().enumerate().rev() {
        tail += b.lines.len();
        if tail > height {
            break;
        }
        last = i;
    }
    if blocks.is_empty() {
        last = 0;
    }
    let first = scroll.min(last);
    let above: usize = blocks[..first.min(blocks.len())]
        .iter()
        .map(|b| b.lines.len())
        .sum();
    let mut lines: Vec<Line<'static>> = Vec::new();
    for (i, b) in blocks.iter().enumerate().skip(first) {
        if lines.len() + b.lines.len() <= height {
            lines.extend(b.lines.iter().cloned());
        } else {
            if i == first {
                // Taller than the page: its head, and the mark says the rest is below.
                lines.extend(b.lines.iter().take(height).cloned());
            }
            break;
        }
    }
    let below = total - above - lines.len();
    Page {
        lines,
        above,
        below,
        first,
        last,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(sizes: &[usize]) -> Vec<Block> {
        sizes
            .iter()
            .enumerate()
            .map(|(i, n)| Block {
                lines: (0..*n).map(|r| Line::raw(format!("{i}.{r}"))).collect(),
            })
            .collect()
    }

    fn text(p: &Page) -> Vec<String> {
        p.lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn a_block_that_does_not_fit_goes_below_whole() {
        let b = blocks(&[1, 3, 2]);
        let p = page(&b, 3, 0);
        assert_eq!(text(&p), ["0.0"]);
        assert_eq!((p.above, p.below), (0, 5));
        assert_eq!(p.mark(), "↓ 5 more");
    }

    #[test]
    fn scrolling_stops_where_the_last_block_is_in_view() {
        let b = blocks(&[1, 3, 2]);
        let p = page(&b, 3, 99);
        assert_eq!(p.last, 2);
        assert_eq!(p.first, 2);
        assert_eq!(text(&p), ["2.0", "2.1"]);
        assert_eq!(p.mark(), "↑ 4 more");
        // Everything fits: nothing to scroll, no mark.
        let p = page(&b, 6, 5);
        assert_eq!((p.first, p.last, p.mark().as_str()), (0, 0, ""));
    }

    #[test]
    fn a_block_taller_than_the_page_shows_its_head() {
        let b = blocks(&[5, 1]);
        let p = page(&b, 2, 0);
        assert_eq!(text(&p), ["0.0", "0.1"]);
        assert_eq!((p.above, p.below), (0, 4));
        assert_eq!(p.last, 1);
    }

    #[test]
    fn no_blocks_no_page() {
        let p = page(&[], 4, 3);
        assert!(p.lines.is_empty());
        assert_eq!((p.first, p.last, p.mark().as_str()), (0, 0, ""));
    }
}
