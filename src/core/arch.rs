//! Architecture knowledge in one table: one row per architecture of the pinned llama.cpp build
//! (`LLM_ARCH_NAMES` in src/llama-arch.cpp, b11434), with what llama.cpp's memory is for it,
//! its hard-coded sliding-window rule, why llmbound does not model its cache (if it does not),
//! how far the compute-buffer replay follows its graph, and the graph's quirks the replay
//! needs. The GGUF reader, `model`, `kv`, `runtime` and docs/architectures.md read this table
//! (tests/architectures_doc.rs keeps the document equal to it). Pure: no I/O, no other
//! top-level module.

/// What memory llama.cpp's `llama_model::create_memory` builds for an architecture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Memory {
    /// An attention (KV) cache: plain, sliding-window, MLA or indexer caches.
    Cache,
    /// No memory at all (encoders, embedding and diffusion models).
    None,
    /// Recurrent state only (`llm_arch_is_recurrent`).
    Recurrent,
    /// An attention cache beside recurrent state (`llm_arch_is_hybrid`).
    Hybrid,
}

/// When llama.cpp turns on the sliding-window pattern for an architecture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SwaWhen {
    /// Always (the window key is required unless a default is given).
    Always,
    /// Only when the file states a window above 0.
    WindowPositive,
    /// Only for a given number of (non-MTP) layers (exaone4: the 64-layer 32B).
    Layers(u32),
}

/// llama.cpp's hard-coded sliding-window rule for an architecture (`load_swa_pattern(ml, n,
/// dense_first)` in each model's `load_arch_hparams`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SwaRule {
    /// When the pattern applies.
    pub when: SwaWhen,
    /// Default period n (None: the file must carry the per-layer array; 0: every layer).
    pub period: Option<u32>,
    /// Layer il is full when `il % n == 0` (else when `il % n == n − 1`).
    pub dense_first: bool,
    /// Window when the key is absent.
    pub default_window: Option<u64>,
    /// Window llama.cpp uses whatever the file says.
    pub forced_window: Option<u64>,
}

impl SwaRule {
    /// Period n, the last layer of each period full.
    pub const fn period(when: SwaWhen, n: u32) -> SwaRule {
        SwaRule {
            when,
            period: Some(n),
            dense_first: false,
            default_window: None,
            forced_window: None,
        }
    }
    /// Period n, the first layer of each period full.
    pub const fn dense_first(when: SwaWhen, n: u32) -> SwaRule {
        SwaRule {
            dense_first: true,
            ..SwaRule::period(when, n)
        }
    }
    /// No default period: the file carries one flag per layer.
    pub const fn per_layer_array(when: SwaWhen) -> SwaRule {
        SwaRule {
            period: None,
            ..SwaRule::period(when, 0)
        }
    }
    /// The window when the file states none.
    pub const fn default_window(self, w: u64) -> SwaRule {
        SwaRule {
            default_window: Some(w),
            ..self
        }
    }
    /// The window llama.cpp uses whatever the file says.
    pub const fn forced_window(self, w: u64) -> SwaRule {
        SwaRule {
            forced_window: Some(w),
            ..self
        }
    }
}

/// How far the compute-buffer replay (`core::runtime`) follows an architecture's graph,
/// measured against llama.cpp's own CPU figure on every oracle fixture case
/// (tests/oracle_runtime.rs keeps each row true).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComputeStatus {
    /// The replay follows llama.cpp's graph: within the band (5% of llama.cpp's figure, or
    /// 1 MiB but never more than a tenth of the figure) on every fixture case, small and
    /// realistic.
    Exact,
    /// Part of the graph is not replayed; what is missing is bounded from above, so the
    /// estimate may be higher than llama.cpp reserves, never lower (on every oracle case).
    /// The text says what is bounded rather than replayed.
    UpperBound(&'static str),
    /// The replay misses part of the graph and can come out on either side of llama.cpp: on
    /// the oracle fixtures it was between `below_pct` % under and `above_pct` % over
    /// llama.cpp's figure (whole percents, rounded outwards). Neither exact nor a bound.
    Estimate {
        /// Largest measured shortfall, % of llama.cpp's figure (rounded up).
        below_pct: u32,
        /// Largest measured excess, % of llama.cpp's figure (rounded up).
        above_pct: u32,
        /// What the replay does not follow.
        why: &'static str,
    },
    /// The replay follows llama.cpp's graph as read from its source, but the oracle fixtures
    /// do not yet measure it on both a small and a realistic shape, so nothing says it is
    /// within the band. The text says which check is missing.
    Unchecked(&'static str),
}

/// The dense FFN as the graph builds it (`build_ffn` in llama.cpp's src/llama-graph.cpp).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ffn {
    /// A parallel gate (`ffn_gate` and `ffn_up`, then the GLU into a new tensor): three
    /// n_ff-wide intermediates.
    Gated,
    /// No gate (up, the activation in place, down): one n_ff-wide intermediate.
    Ungated,
    /// Gate and up fused in one `ffn_up` of 2 × n_ff rows (chatglm, glm4, phi3, plamo2,
    /// plamo3): the 2 × n_ff projection, then the GLU into an n_ff-wide tensor.
    FusedGateUp,
}

/// The compute graph's quirks the replay needs (all false / gated for a plain decoder).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Graph {
    /// Attends within the batch only, without the KV cache (encoders, embedding and
    /// diffusion models): the KQ mask and scores span the batch's own rows.
    pub local_attention: bool,
    /// How the dense FFN is built.
    pub ffn: Ffn,
    /// The graph ends in pooled embeddings, not logits.
    pub embedding_output: bool,
    /// llama.cpp turns flash attention off whatever is asked (`llama_init_from_model`: grok).
    pub flash_attn_off: bool,
    /// How the graph ends (the families with multi-token prediction keep the last hidden
    /// state as a graph output, `t_h_nextn`).
    pub tail: Tail,
}

/// How a decoder's graph ends after its last layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tail {
    /// The last layer keeps only the output rows (`ggml_get_rows` on its attention output and
    /// residual), the output norm in place over its output, then the logits.
    Plain,
    /// As [`Tail::Plain`], but the last layer's output is a graph output (never freed), so
    /// the output norm is a new tensor (deepseek2, glm4moe: `t_h_nextn`).
    KeptHidden,
    /// The last layer runs every row; its output is a graph output and the output rows are
    /// gathered after it (gpt-oss, qwen3next, qwen35, gemma4: `embeddings_nextn_masked` off).
    LateRows,
}

/// One architecture of the pinned llama.cpp build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arch {
    /// `general.architecture` as llama.cpp spells it.
    pub name: &'static str,
    /// The memory llama.cpp builds.
    pub memory: Memory,
    /// The hard-coded sliding-window rule, if any.
    pub swa: Option<SwaRule>,
    /// Why llmbound does not model the cache llama.cpp builds (then it says "not supported").
    pub unsupported: Option<&'static str>,
    /// How far the compute-buffer replay follows the graph.
    pub compute: ComputeStatus,
    /// The graph's quirks.
    pub graph: Graph,
    /// llama.cpp keeps this architecture's attention memory in compressed per-sequence caches
    /// (`llama_kv_cache_dsv4`: a raw window, CSA/HCA compressed rows, the lightning indexer and
    /// compressor states), sized by `kv` on its own path.
    pub compressed_kv: bool,
}

impl Arch {
    const fn new(name: &'static str, memory: Memory) -> Arch {
        Arch {
            name,
            memory,
            swa: None,
            unsupported: None,
            compute: ComputeStatus::Exact,
            graph: Graph {
                local_attention: false,
                ffn: Ffn::Gated,
                embedding_output: false,
                flash_attn_off: false,
                tail: Tail::Plain,
            },
            compressed_kv: false,
        }
    }
    const fn swa(self, rule: SwaRule) -> Arch {
        Arch {
            swa: Some(rule),
            ..self
        }
    }
    const fn unsupported(self, why: &'static str) -> Arch {
        Arch {
            unsupported: Some(why),
            ..self
        }
    }
    const fn compute(self, status: ComputeStatus) -> Arch {
        Arch {
            compute: status,
            ..self
        }
    }
    const fn compressed_kv(mut self) -> Arch {
        self.compressed_kv = true;
        self
    }
    const fn local_attention(mut self) -> Arch {
        self.graph.local_attention = true;
        self
    }
    const fn ungated_ffn(mut self) -> Arch {
        self.graph.ffn = Ffn::Ungated;
        self
    }
    const fn fused_gate_up(mut self) -> Arch {
        self.graph.ffn = Ffn::FusedGateUp;
        self
    }
    const fn flash_attn_off(mut self) -> Arch {
        self.graph.flash_attn_off = true;
        self
    }
    const fn embedding_output(mut self) -> Arch {
        self.graph.embedding_output = true;
        self
    }
    const fn tail(mut self, tail: Tail) -> Arch {
        self.graph.tail = tail;
        self
    }
}

/// The pinned llama.cpp build the table was read from.
pub const LLAMA_CPP_BUILD: u32 = 11434;

const DRAFT: &str = "a draft model: llama.cpp sizes its cache from the target model's context";
const UB_ARWKV7: &str = "the RWKV time mix, sixteen n_embd f32 rows per token at once";
const UB_DEEPSEEK4: &str = "the compressed attention (CSA/HCA masks, indexer scores, top-k masks, concatenated keys, and the four hyper-connection residual streams), all counted live at once beside the plain layer";
const UB_GEMMA3N: &str =
    "the first layer's per-layer inputs, four n_layer x 256 f32 per row held at once";
const UB_GLM5_NEXT: &str = "the pooled indexer's scores, one n_kv x rows f32 per sequence";
const UB_JINA_BERT_V3: &str = "the encoder graph around its attention within the batch, counted rather than replayed (up to +111% over llama.cpp on the oracle fixtures, never below)";
const UB_MAMBA: &str = "the SSM block (conv and scan intermediates and their inputs), counted rather than replayed (up to +54% over llama.cpp on the oracle fixtures, never below; more on other shapes)";
const UB_MAMBA2: &str = "the SSM block (conv and scan intermediates and their inputs), counted rather than replayed (up to +50% over llama.cpp on the oracle fixtures, never below; more on other shapes)";
const UB_QWEN4EXP: &str = "the QSA selection with pooled keys (pooled scores and mask, the filled, scattered and added selection masks), counted live through the attention";

/// Why a row is an estimate or a bound without a traced cause: the oracle fixtures show the
/// replay off llama.cpp's figure, and the part of the graph behind it is not yet traced in
/// llama.cpp's source.
const UNTRACED: &str =
    "a part of the graph found off by the oracle fixtures and not yet traced in llama.cpp's source";
const SHORTCONV: &str = "the short-convolution block";
const UB_BATCH_LOCAL: &str = "a part of the batch-local (encoder, embedding or diffusion) graph not yet traced in llama.cpp's source, counted high (up to +8.6% over llama.cpp on the oracle fixtures, never below)";
const UB_NEO_BERT: &str = "a part of the encoder graph not yet traced in llama.cpp's source, counted high (up to +47% over llama.cpp on the oracle fixtures, never below)";
const UB_MOE_22: &str = "a part of the MoE block not yet traced in llama.cpp's source, counted high (up to +23% over llama.cpp on the oracle fixtures, never below)";
const UB_PHI3: &str = "one n_embd-wide f32 row per graph row more than llama.cpp holds, in a part of the graph not yet traced in llama.cpp's source (up to +6.3% over llama.cpp on the oracle fixtures, never below; within 1% on the tiny shape)";
const UB_GROK: &str = "a part of the graph not yet traced in llama.cpp's source, counted high (up to +40% over llama.cpp on the realistic Grok-1 shape with four sequences at 4,096 tokens, never below)";
const UB_MHA_7: &str = "a part of the graph not yet traced in llama.cpp's source, counted high (up to +6.4% over llama.cpp on the realistic OLMo-7B and PLaMo-13B shapes, never below)";
const UB_WAVTOKENIZER: &str = "the posnet and convnext audio decoder, counted as decoder layers rather than replayed (up to +469% over llama.cpp on the oracle fixtures, never below)";
/// Why an architecture's replay is unchecked: no llama.cpp figure at all, or only a small one.
const NO_FIXTURE: &str = "no llama.cpp figure for it yet";
const SMALL_ONLY: &str = "within the band on a small shape, no realistic shape yet";
const UB_SWA_20: &str = "a part of the graph not yet traced in llama.cpp's source, counted high (up to +20% over llama.cpp on the oracle fixtures, never below)";

/// Every architecture of the pinned llama.cpp build, sorted by name.
pub const ARCHITECTURES: &[Arch] = &[
    Arch::new("afmoe", Memory::Cache).swa(SwaRule::period(SwaWhen::WindowPositive, 4)),
    Arch::new("apertus", Memory::Cache).ungated_ffn(),
    Arch::new("arcee", Memory::Cache).ungated_ffn(),
    Arch::new("arctic", Memory::Cache),
    Arch::new("arwkv7", Memory::Recurrent).compute(ComputeStatus::UpperBound(UB_ARWKV7)),
    Arch::new("baichuan", Memory::Cache),
    Arch::new("bailingmoe", Memory::Cache),
    Arch::new("bailingmoe2", Memory::Cache),
    Arch::new("bailingmoe3", Memory::Hybrid)
        .compute(ComputeStatus::Estimate {
            below_pct: 5,
            above_pct: 36,
            why: UNTRACED,
        })
        .tail(Tail::LateRows),
    Arch::new("bert", Memory::None)
        .local_attention()
        .ungated_ffn()
        .embedding_output()
        .compute(ComputeStatus::Estimate {
            below_pct: 7,
            above_pct: 1,
            why: UNTRACED,
        }),
    Arch::new("bitnet", Memory::Cache),
    Arch::new("bloom", Memory::Cache).ungated_ffn(),
    Arch::new("chameleon", Memory::Cache),
    Arch::new("chatglm", Memory::Cache).fused_gate_up(),
    Arch::new("clef", Memory::None).compute(ComputeStatus::Unchecked(NO_FIXTURE)),
    Arch::new("clip", Memory::Cache)
        .unsupported("a vision/audio projector, not a language model: it has no cache"),
    Arch::new("codeshell", Memory::Cache).ungated_ffn(),
    Arch::new("cogvlm", Memory::Cache).compute(ComputeStatus::Estimate {
        below_pct: 1,
        above_pct: 23,
        why: UNTRACED,
    }),
    Arch::new("cohere2", Memory::Cache).swa(SwaRule::period(SwaWhen::Always, 4)),
    Arch::new("cohere2moe", Memory::Cache)
        .swa(SwaRule::dense_first(SwaWhen::Always, 4))
        .tail(Tail::LateRows),
    Arch::new("command-r", Memory::Cache),
    Arch::new("dbrx", Memory::Cache),
    Arch::new("deci", Memory::Cache),
    Arch::new("deepseek", Memory::Cache),
    Arch::new("deepseek2", Memory::Cache).tail(Tail::KeptHidden),
    Arch::new("deepseek2-ocr", Memory::Cache),
    Arch::new("deepseek32", Memory::Cache).tail(Tail::KeptHidden),
    Arch::new("deepseek4", Memory::Hybrid)
        .swa(SwaRule::period(SwaWhen::Always, 0))
        .compute(ComputeStatus::UpperBound(UB_DEEPSEEK4))
        .compressed_kv(),
    Arch::new("dflash", Memory::Cache).unsupported(DRAFT),
    Arch::new("dots1", Memory::Cache),
    Arch::new("dots3note", Memory::Cache)
        .swa(SwaRule::per_layer_array(SwaWhen::Always))
        .compute(ComputeStatus::Estimate {
            below_pct: 8,
            above_pct: 1,
            why: UNTRACED,
        }),
    Arch::new("dream", Memory::None)
        .local_attention()
        .compute(ComputeStatus::UpperBound(UB_BATCH_LOCAL)),
    Arch::new("eagle3", Memory::Cache).unsupported(DRAFT),
    Arch::new("ernie4_5", Memory::Cache),
    Arch::new("ernie4_5-moe", Memory::Cache),
    Arch::new("eurobert", Memory::None)
        .local_attention()
        .embedding_output()
        .compute(ComputeStatus::UpperBound(UB_BATCH_LOCAL)),
    Arch::new("exaone", Memory::Cache),
    Arch::new("exaone-moe", Memory::Cache)
        .swa(SwaRule::period(SwaWhen::Always, 4).default_window(128)),
    Arch::new("exaone4", Memory::Cache)
        .swa(SwaRule::period(SwaWhen::Layers(64), 4).default_window(4096)),
    Arch::new("falcon", Memory::Cache).ungated_ffn(),
    Arch::new("falcon-h1", Memory::Hybrid),
    Arch::new("gemma", Memory::Cache),
    Arch::new("gemma-embedding", Memory::None)
        .local_attention()
        .embedding_output(),
    Arch::new("gemma2", Memory::Cache)
        .swa(SwaRule::period(SwaWhen::Always, 2).default_window(4096)),
    Arch::new("gemma3", Memory::Cache).swa(SwaRule::period(SwaWhen::WindowPositive, 6)),
    Arch::new("gemma3n", Memory::Cache)
        .swa(SwaRule::period(SwaWhen::Always, 5))
        .compute(ComputeStatus::UpperBound(UB_GEMMA3N)),
    Arch::new("gemma4", Memory::Cache)
        .swa(SwaRule::per_layer_array(SwaWhen::Always))
        .tail(Tail::LateRows),
    Arch::new("gemma4-assistant", Memory::Cache)
        .swa(SwaRule::per_layer_array(SwaWhen::Always))
        .unsupported(DRAFT),
    Arch::new("glm-dsa", Memory::Cache)
        .compute(ComputeStatus::Estimate {
            below_pct: 6,
            above_pct: 2,
            why: UNTRACED,
        })
        .tail(Tail::KeptHidden),
    Arch::new("glm4", Memory::Cache).fused_gate_up(),
    Arch::new("glm4moe", Memory::Cache).tail(Tail::KeptHidden),
    Arch::new("glm5-next", Memory::Hybrid).compute(ComputeStatus::UpperBound(UB_GLM5_NEXT)),
    Arch::new("gpt-oss", Memory::Cache)
        .swa(SwaRule::period(SwaWhen::Always, 2))
        .tail(Tail::LateRows),
    Arch::new("gpt2", Memory::Cache).ungated_ffn(),
    Arch::new("gptj", Memory::Cache)
        .unsupported("llama.cpp lists it but refuses to load it (unsupported model architecture)"),
    Arch::new("gptneox", Memory::Cache).ungated_ffn(),
    Arch::new("granite", Memory::Cache),
    Arch::new("granite_swa", Memory::Cache).swa(SwaRule::per_layer_array(SwaWhen::Always)),
    Arch::new("granitehybrid", Memory::Hybrid).compute(ComputeStatus::UpperBound(UB_MOE_22)),
    Arch::new("granitemoe", Memory::Cache).compute(ComputeStatus::UpperBound(UB_MOE_22)),
    Arch::new("graniteswitch", Memory::Cache)
        .unsupported("llama.cpp adds a router layer with a cache of its own"),
    Arch::new("grok", Memory::Cache)
        .flash_attn_off()
        .compute(ComputeStatus::UpperBound(UB_GROK)),
    Arch::new("grovemoe", Memory::Cache),
    Arch::new("hrm_text", Memory::Cache),
    Arch::new("hunyuan-dense", Memory::Cache),
    Arch::new("hunyuan-moe", Memory::Cache),
    Arch::new("hunyuan_vl", Memory::Cache),
    Arch::new("hy_v3", Memory::Cache).tail(Tail::LateRows),
    Arch::new("hy_v4", Memory::Cache).compute(ComputeStatus::Estimate {
        below_pct: 23,
        above_pct: 0,
        why: UNTRACED,
    }),
    Arch::new("internlm2", Memory::Cache),
    Arch::new("jais", Memory::Cache).compute(ComputeStatus::Estimate {
        below_pct: 7,
        above_pct: 5,
        why: UNTRACED,
    }),
    Arch::new("jais2", Memory::Cache).ungated_ffn(),
    Arch::new("jamba", Memory::Hybrid).compute(ComputeStatus::UpperBound(UB_MOE_22)),
    Arch::new("jina-bert-v2", Memory::None)
        .local_attention()
        .embedding_output()
        .compute(ComputeStatus::Unchecked(NO_FIXTURE)),
    Arch::new("jina-bert-v3", Memory::None)
        .compute(ComputeStatus::UpperBound(UB_JINA_BERT_V3))
        .local_attention()
        .ungated_ffn()
        .embedding_output(),
    Arch::new("kimi-k3", Memory::Hybrid),
    Arch::new("kimi-linear", Memory::Hybrid).compute(ComputeStatus::Estimate {
        below_pct: 4,
        above_pct: 41,
        why: UNTRACED,
    }),
    Arch::new("laguna", Memory::Cache).swa(SwaRule::dense_first(SwaWhen::WindowPositive, 4)),
    Arch::new("lfm2", Memory::Hybrid).compute(ComputeStatus::Estimate {
        below_pct: 1,
        above_pct: 41,
        why: SHORTCONV,
    }),
    Arch::new("lfm2moe", Memory::Hybrid).compute(ComputeStatus::Estimate {
        below_pct: 1,
        above_pct: 41,
        why: SHORTCONV,
    }),
    Arch::new("llada", Memory::None)
        .local_attention()
        .compute(ComputeStatus::UpperBound(UB_BATCH_LOCAL)),
    Arch::new("llada-moe", Memory::None).local_attention(),
    Arch::new("llama", Memory::Cache),
    Arch::new("llama-embed", Memory::Cache)
        .local_attention()
        .embedding_output()
        .compute(ComputeStatus::UpperBound(UB_BATCH_LOCAL)),
    Arch::new("llama4", Memory::Cache),
    Arch::new("maincoder", Memory::Cache),
    Arch::new("mamba", Memory::Recurrent).compute(ComputeStatus::UpperBound(UB_MAMBA)),
    Arch::new("mamba2", Memory::Recurrent).compute(ComputeStatus::UpperBound(UB_MAMBA2)),
    Arch::new("maple", Memory::Cache).swa(SwaRule::per_layer_array(SwaWhen::Always)),
    Arch::new("mellum", Memory::Cache).swa(SwaRule::period(SwaWhen::WindowPositive, 4)),
    Arch::new("mimo2", Memory::Cache).swa(SwaRule::per_layer_array(SwaWhen::Always)),
    Arch::new("minicpm", Memory::Cache),
    Arch::new("minicpm3", Memory::Cache).compute(ComputeStatus::Unchecked(SMALL_ONLY)),
    Arch::new("minimax-01", Memory::Hybrid),
    Arch::new("minimax-m2", Memory::Cache),
    Arch::new("minimax-m3", Memory::Cache),
    Arch::new("mistral3", Memory::Cache),
    Arch::new("mistral4", Memory::Cache),
    Arch::new("modern-bert", Memory::None)
        .local_attention()
        .embedding_output()
        .compute(ComputeStatus::Estimate {
            below_pct: 9,
            above_pct: 41,
            why: UNTRACED,
        }),
    Arch::new("mpt", Memory::Cache)
        .ungated_ffn()
        .compute(ComputeStatus::Estimate {
            below_pct: 7,
            above_pct: 4,
            why: UNTRACED,
        }),
    Arch::new("muse-glimmer", Memory::Cache)
        .swa(SwaRule::period(SwaWhen::Always, 4))
        .compute(ComputeStatus::UpperBound(UB_SWA_20)),
    Arch::new("nanbeige", Memory::Cache)
        .unsupported("llama.cpp repeats the physical layers in loops"),
    Arch::new("nemotron", Memory::Cache).ungated_ffn(),
    Arch::new("nemotron_h", Memory::Hybrid)
        .compute(ComputeStatus::Unchecked(SMALL_ONLY))
        .tail(Tail::LateRows),
    Arch::new("nemotron_h_moe", Memory::Hybrid).compute(ComputeStatus::Unchecked(SMALL_ONLY)),
    Arch::new("neo-bert", Memory::None)
        .local_attention()
        .embedding_output()
        .compute(ComputeStatus::UpperBound(UB_NEO_BERT)),
    Arch::new("nomic-bert", Memory::None)
        .local_attention()
        .embedding_output(),
    Arch::new("nomic-bert-moe", Memory::None)
        .compute(ComputeStatus::UpperBound(UB_JINA_BERT_V3))
        .local_attention()
        .embedding_output(),
    Arch::new("olmo", Memory::Cache).compute(ComputeStatus::UpperBound(UB_MHA_7)),
    Arch::new("olmo2", Memory::Cache).swa(SwaRule::period(SwaWhen::WindowPositive, 4)),
    Arch::new("olmoe", Memory::Cache),
    Arch::new("openelm", Memory::Cache),
    Arch::new("orion", Memory::Cache),
    Arch::new("paddleocr", Memory::Cache),
    Arch::new("pangu-embedded", Memory::Cache),
    Arch::new("phi2", Memory::Cache).ungated_ffn(),
    Arch::new("phi3", Memory::Cache)
        .fused_gate_up()
        .compute(ComputeStatus::UpperBound(UB_PHI3)),
    Arch::new("phimoe", Memory::Cache),
    Arch::new("plamo", Memory::Cache).compute(ComputeStatus::UpperBound(UB_MHA_7)),
    Arch::new("plamo2", Memory::Hybrid).fused_gate_up(),
    Arch::new("plamo3", Memory::Cache)
        .swa(SwaRule::period(SwaWhen::WindowPositive, 8))
        .fused_gate_up(),
    Arch::new("plm", Memory::Cache).compute(ComputeStatus::Unchecked(NO_FIXTURE)),
    Arch::new("pockettts", Memory::Cache).ungated_ffn(),
    Arch::new("qwen", Memory::Cache),
    Arch::new("qwen2", Memory::Cache),
    Arch::new("qwen2moe", Memory::Cache),
    Arch::new("qwen2vl", Memory::Cache),
    Arch::new("qwen3", Memory::Cache),
    Arch::new("qwen35", Memory::Hybrid).tail(Tail::LateRows),
    Arch::new("qwen35moe", Memory::Hybrid)
        .compute(ComputeStatus::Unchecked(SMALL_ONLY))
        .tail(Tail::LateRows),
    Arch::new("qwen3moe", Memory::Cache),
    Arch::new("qwen3next", Memory::Hybrid).tail(Tail::LateRows),
    Arch::new("qwen3tts", Memory::Cache),
    Arch::new("qwen3vl", Memory::Cache),
    Arch::new("qwen3vlmoe", Memory::Cache),
    Arch::new("qwen4exp", Memory::Hybrid)
        .compute(ComputeStatus::UpperBound(UB_QWEN4EXP))
        .tail(Tail::KeptHidden),
    Arch::new("refact", Memory::Cache),
    Arch::new("rnd1", Memory::None).local_attention(),
    Arch::new("rwkv6", Memory::Recurrent).compute(ComputeStatus::UpperBound(UB_ARWKV7)),
    Arch::new("rwkv6qwen2", Memory::Recurrent).compute(ComputeStatus::UpperBound(UB_ARWKV7)),
    Arch::new("rwkv7", Memory::Recurrent),
    Arch::new("seed_oss", Memory::Cache),
    Arch::new("smallthinker", Memory::Cache)
        .swa(SwaRule::dense_first(SwaWhen::WindowPositive, 4).forced_window(4096)),
    Arch::new("smollm3", Memory::Cache),
    Arch::new("spark2_5", Memory::Cache)
        .swa(SwaRule::per_layer_array(SwaWhen::Always))
        .compute(ComputeStatus::UpperBound(UB_SWA_20)),
    Arch::new("stablelm", Memory::Cache),
    Arch::new("starcoder", Memory::Cache).ungated_ffn(),
    Arch::new("starcoder2", Memory::Cache).ungated_ffn(),
    Arch::new("step35", Memory::Cache)
        .swa(SwaRule::per_layer_array(SwaWhen::Always))
        .tail(Tail::LateRows),
    Arch::new("t5", Memory::Cache).ungated_ffn(),
    Arch::new("t5encoder", Memory::Cache)
        .local_attention()
        .ungated_ffn()
        .embedding_output(),
    Arch::new("talkie", Memory::Cache).compute(ComputeStatus::Estimate {
        below_pct: 1,
        above_pct: 23,
        why: UNTRACED,
    }),
    Arch::new("wavtokenizer-dec", Memory::None).compute(ComputeStatus::UpperBound(UB_WAVTOKENIZER)),
    Arch::new("xverse", Memory::Cache),
];

/// The row of `name`, when the pinned llama.cpp build knows the architecture.
pub fn lookup(name: &str) -> Option<&'static Arch> {
    ARCHITECTURES
        .binary_search_by(|a| a.name.cmp(name))
        .ok()
        .map(|i| &ARCHITECTURES[i])
}

/// The names of every row, in order.
pub fn names() -> impl Iterator<Item = &'static str> {
    ARCHITECTURES.iter().map(|a| a.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_and_unique_so_lookup_finds_every_row() {
        for w in ARCHITECTURES.windows(2) {
            assert!(w[0].name < w[1].name, "{} before {}", w[0].name, w[1].name);
        }
        for a in ARCHITECTURES {
            assert_eq!(lookup(a.name), Some(a));
        }
        assert_eq!(lookup("not-an-arch"), None);
        assert_eq!(ARCHITECTURES.len(), 154);
    }

    #[test]
    fn kinds_as_llama_cpp_lists_them() {
        let of = |m: Memory| -> Vec<&str> {
            ARCHITECTURES
                .iter()
                .filter(|a| a.memory == m)
                .map(|a| a.name)
                .collect()
        };
        assert_eq!(
            of(Memory::Recurrent),
            ["arwkv7", "mamba", "mamba2", "rwkv6", "rwkv6qwen2", "rwkv7"]
        );
        assert_eq!(of(Memory::Hybrid).len(), 18);
        assert_eq!(of(Memory::None).len(), 15);
        assert!(lookup("gemma2").unwrap().swa.unwrap().default_window == Some(4096));
        assert!(lookup("bert").unwrap().graph.embedding_output);
    }
}
