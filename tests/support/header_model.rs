//! A placement fixture's model, read from its committed GGUF header as `core::plan` reads a
//! user's file.

use std::path::Path;

use llmbound::core::model::ModelShape;
use llmbound::core::placement::PlacementModel;
use llmbound::core::runtime::FeedForward;
use llmbound::profile::Catalog;

/// The model as the placement oracles use it.
pub struct Loaded {
    pub model: PlacementModel,
    pub shape: ModelShape,
    pub ff: FeedForward,
}

/// The header at `path`: its shape, its tensors as llama.cpp creates them, its FFN widths.
pub fn load(cat: &Catalog, path: &Path) -> Loaded {
    let g = llmbound::workspace::open_gguf(cat, path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let shape = g.shape().cloned().expect("model shape");
    let n_expert = shape.moe.map_or(0, |m| m.experts);
    let n_ctx_train = u32::try_from(shape.native_context.unwrap_or(4096)).unwrap_or(u32::MAX);
    let inv = g.inventory().to_core_inventory();
    let model = PlacementModel::from_inventory(
        &inv,
        shape.layer_count(),
        n_expert,
        n_ctx_train,
        shape.tied_embeddings,
    );
    Loaded {
        model,
        shape,
        ff: inv.feed_forward,
    }
}
