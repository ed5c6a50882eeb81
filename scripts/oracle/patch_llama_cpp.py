#!/usr/bin/env python3
"""Apply llmbound's small oracle patch to an extracted llama.cpp source tree.

The patch only adds log lines and one option: it changes no computation.
  * `-kvu` / `--kv-unified` is accepted by llama-fit-params (upstream limits it to the
    server and a few examples);
  * every cache, recurrent state, output, compute and model buffer is also logged in exact
    bytes, on lines that start with `llmbound-exact:` so the runner can parse them without
    the MiB rounding of the upstream lines;
  * the RPC server advertises `LLMBOUND_RPC_MEM_BYTES` bytes (free = total) when that is set,
    so the placement oracle can emulate devices of chosen sizes;
  * Vulkan only (ggml-vulkan.cpp, compiled by build-llama-cpp-vulkan.sh alone): the instance
    is created without the validation-layer settings when the headers lack
    VK_EXT_layer_settings, and the device reports `LLMBOUND_VK_MEM_BYTES` bytes when set.
  * with `LLMBOUND_ALLOC_TRACE` set, ggml-alloc's own allocation trace (upstream's `AT_PRINTF`,
    compiled out there) goes to stderr, each allocation prefixed with its buffer's index: how
    the scheduler's per-backend compute buffers are studied (`sched_trace.py --alloc`).

Idempotent: a file that already carries the marker is left alone. Each replacement must
match exactly once, so a llama.cpp that moved fails loudly here instead of silently
producing fixtures without exact figures.

Usage: patch_llama_cpp.py LLAMA_CPP_SOURCE_DIR
"""
import sys
from pathlib import Path

MARK = "llmbound-exact"

PATCHES = [
    (
        "common/arg.cpp",
        '.set_env("LLAMA_ARG_KV_UNIFIED").set_examples({LLAMA_EXAMPLE_SERVER, ',
        '.set_env("LLAMA_ARG_KV_UNIFIED").set_examples({/* llmbound-exact */ LLAMA_EXAMPLE_FIT_PARAMS, LLAMA_EXAMPLE_SERVER, ',
    ),
    (
        "src/llama-kv-cache.cpp",
        "                ggml_type_name(type_v), (float)memory_size_v / (1024.0f * 1024.0f));\n",
        "                ggml_type_name(type_v), (float)memory_size_v / (1024.0f * 1024.0f));\n"
        '        LLAMA_LOG_INFO("llmbound-exact: kv cells=%u layers=%d seqs=%u streams=%u type_k=%s type_v=%s k_bytes=%zu v_bytes=%zu\\n",\n'
        "                kv_size, (int) layers.size(), n_seq_max, n_stream, ggml_type_name(type_k), ggml_type_name(type_v), memory_size_k, memory_size_v);\n",
    ),
    (
        "src/llama-memory-recurrent.cpp",
        "                ggml_type_name(type_r), (float)memory_size_p / (1024.0f * 1024.0f));\n",
        "                ggml_type_name(type_r), (float)memory_size_p / (1024.0f * 1024.0f));\n"
        '        LLAMA_LOG_INFO("llmbound-exact: recurrent cells=%u layers=%d seqs=%u rs_seq=%u type_r=%s type_s=%s r_bytes=%zu s_bytes=%zu p_bytes=%zu\\n",\n'
        "                mem_size, n_layer, n_seq_max, n_rs_seq, ggml_type_name(type_r), ggml_type_name(type_s), memory_size_r, memory_size_s, memory_size_p);\n",
    ),
    (
        "src/llama-context.cpp",
        "                    ggml_backend_buffer_get_size(buf_output.get()) / 1024.0 / 1024.0);\n",
        "                    ggml_backend_buffer_get_size(buf_output.get()) / 1024.0 / 1024.0);\n"
        '            LLAMA_LOG_INFO("llmbound-exact: output buffer=%s bytes=%zu\\n",\n'
        "                    ggml_backend_buffer_name(buf_output.get()), ggml_backend_buffer_get_size(buf_output.get()));\n",
    ),
    (
        "src/llama-context.cpp",
        "                    backend_buf_exp_size[i] / 1024.0 / 1024.0);\n        }\n",
        "                    backend_buf_exp_size[i] / 1024.0 / 1024.0);\n        }\n"
        '        LLAMA_LOG_INFO("llmbound-exact: compute buffer=%s bytes=%zu\\n",\n'
        "                ggml_backend_buft_name(buft), (size_t) backend_buf_exp_size[i]);\n",
    ),
    (
        "src/llama-model.cpp",
        '            LLAMA_LOG_INFO("%s: %12s model buffer size = %8.2f MiB\\n",\n'
        "                __func__, ggml_backend_buffer_name(buf.get()), ggml_backend_buffer_get_size(buf.get()) / 1024.0 / 1024.0);\n",
        '            LLAMA_LOG_INFO("%s: %12s model buffer size = %8.2f MiB\\n",\n'
        "                __func__, ggml_backend_buffer_name(buf.get()), ggml_backend_buffer_get_size(buf.get()) / 1024.0 / 1024.0);\n"
        '            LLAMA_LOG_INFO("llmbound-exact: model buffer=%s bytes=%zu\\n",\n'
        "                ggml_backend_buffer_name(buf.get()), ggml_backend_buffer_get_size(buf.get()));\n",
    ),
    (
        "common/fit.cpp",
        "    common_memory_breakdown_print(ctx);\n\n    llama_free(ctx);\n",
        "    common_memory_breakdown_print(ctx);\n"
        "    for (const auto & [buft, mb] : memory_breakdown) {\n"
        '        fprintf(stderr, "llmbound-exact: breakdown buft=%s host=%d model=%zu context=%zu compute=%zu\\n",\n'
        "                ggml_backend_buft_name(buft), (int) ggml_backend_buft_is_host(buft), mb.model, mb.context, mb.compute);\n"
        "    }\n"
        "\n    llama_free(ctx);\n",
    ),
    (
        "src/llama-model-loader.cpp",
        '#include <cstring>\n',
        '#include <cstring>\n#include <cstdlib>\n'
        '// llmbound-exact: with LLMBOUND_DISCOVER set, a missing or misshapen tensor is logged and the\n'
        '// load goes on, so one run lists every problem; the load still fails at the end.\n'
        'static int llmbound_discover_problems = 0;\n'
        'static bool llmbound_discover() { return std::getenv("LLMBOUND_DISCOVER") != nullptr; }\n',
    ),
    (
        "src/llama-model-loader.cpp",
        "    if (!is_ok) {\n        throw std::runtime_error(\n                format(\"%s: tensor '%s' has wrong shape; expected %s, got %s\",\n",
        "    if (!is_ok && llmbound_discover()) {\n"
        '        LLAMA_LOG_INFO("llmbound-exact: discover-shape %s [%s]\\n", name.c_str(), llama_format_tensor_shape(ne).c_str());\n'
        "        llmbound_discover_problems++;\n"
        "        return cur;\n"
        "    }\n"
        "    if (!is_ok) {\n        throw std::runtime_error(\n                format(\"%s: tensor '%s' has wrong shape; expected %s, got %s\",\n",
    ),
    (
        "src/llama-model-loader.cpp",
        "    if (cur == NULL) {\n        if (!required) {\n            return NULL;\n        }\n        throw std::runtime_error(format(\"%s: tensor '%s' not found\", __func__, name.c_str()));\n",
        "    if (cur == NULL) {\n        if (!required) {\n"
        '            LLAMA_LOG_INFO("llmbound-exact: optional-absent %s [%s]\\n", name.c_str(), llama_format_tensor_shape(ne).c_str());\n'
        "            return NULL;\n        }\n"
        "        if (llmbound_discover()) {\n"
        '            LLAMA_LOG_INFO("llmbound-exact: discover-missing %s [%s]\\n", name.c_str(), llama_format_tensor_shape(ne).c_str());\n'
        "            llmbound_discover_problems++;\n"
        "            return NULL;\n"
        "        }\n"
        "        throw std::runtime_error(format(\"%s: tensor '%s' not found\", __func__, name.c_str()));\n",
    ),
    (
        "src/llama-model-loader.cpp",
        "void llama_model_loader::done_getting_tensors(bool partial) const {\n",
        "void llama_model_loader::done_getting_tensors(bool partial) const {\n"
        "    if (llmbound_discover_problems > 0) {\n"
        '        throw std::runtime_error(format("llmbound discovery: %d tensor problem(s)", llmbound_discover_problems));\n'
        "    }\n",
    ),
    (
        "common/log.cpp",
        "    void add(enum ggml_log_level level, const char * fmt, va_list args) {\n        std::unique_lock<std::mutex> lock(mtx);\n",
        "    void add(enum ggml_log_level level, const char * fmt, va_list args) {\n        std::unique_lock<std::mutex> lock(mtx);\n"
        "        // llmbound-exact: with LLMBOUND_SYNC_LOG set, print at once (a crash loses nothing)\n"
        '        static const bool llmbound_sync = std::getenv("LLMBOUND_SYNC_LOG") != nullptr;\n'
        "        if (llmbound_sync) {\n"
        "            if (level != GGML_LOG_LEVEL_CONT) {\n"
        '                fprintf(stderr, "0.00.000.000 %c ", "?DIWE?"[level <= 5 ? level : 5]);\n'
        "            }\n"
        "            va_list args_copy;\n"
        "            va_copy(args_copy, args);\n"
        "            vfprintf(stderr, fmt, args_copy);\n"
        "            va_end(args_copy);\n"
        "            fflush(stderr);\n"
        "            return;\n"
        "        }\n",
    ),
    (
        "tools/fit-params/fit-params.cpp",
        "    common_init();\n",
        "    common_init();\n"
        "    // llmbound-exact: an abort or a crash must not lose the (asynchronous) log either\n"
        "    ggml_set_abort_callback([](const char * msg) {\n"
        '        if (std::getenv("LLMBOUND_SYNC_LOG") == nullptr) {\n'
        "            common_log_flush(common_log_main());\n"
        "        }\n"
        '        fprintf(stderr, "%s\\n", msg);\n'
        "    });\n"
        "    signal(SIGSEGV, [](int sig) {\n"
        '        fprintf(stderr, "llmbound-exact: crashed with signal %d\\n", sig);\n'
        "        signal(sig, SIG_DFL);\n"
        "        raise(sig);\n"
        "    });\n",
    ),
    (
        "tools/fit-params/fit-params.cpp",
        "#include <cinttypes>\n",
        "#include <cinttypes>\n#include <csignal>\n#include <cstdlib>\n",
    ),
    (
        "tools/fit-params/fit-params.cpp",
        "        common_fit_print(params.model.path.c_str(), &mparams, &cparams);\n",
        "        // llmbound-exact: a failed load must not lose its log (the logger is asynchronous)\n"
        "        try {\n"
        "            common_fit_print(params.model.path.c_str(), &mparams, &cparams);\n"
        "        } catch (const std::exception & e) {\n"
        "            common_log_flush(common_log_main());\n"
        '            fprintf(stderr, "llmbound-exact: failed %s\\n", e.what());\n'
        "            return 1;\n"
        "        }\n"
        "        common_log_flush(common_log_main());\n",
    ),
    (
        "ggml/src/ggml-rpc/ggml-rpc.cpp",
        "#include <cstring>\n",
        "#include <cstring>\n#include <cstdlib>\n",
    ),
    (
        "ggml/src/ggml-rpc/ggml-rpc.cpp",
        "    ggml_backend_dev_memory(dev, &free, &total);\n"
        "    response.free_mem = free;\n",
        "    ggml_backend_dev_memory(dev, &free, &total);\n"
        "    // llmbound-exact: with LLMBOUND_RPC_MEM_BYTES set, the server advertises that much memory\n"
        "    // (free = total), so a placement oracle can emulate devices of chosen sizes\n"
        '    if (const char * llmbound_mem = std::getenv("LLMBOUND_RPC_MEM_BYTES")) {\n'
        "        free = total = (size_t) std::strtoull(llmbound_mem, nullptr, 10);\n"
        "    }\n"
        "    response.free_mem = free;\n",
    ),
    # Vulkan (built only by build-llama-cpp-vulkan.sh; the CPU/RPC build never compiles this
    # file, so these edits change nothing there).
    (
        "ggml/src/ggml-vulkan/ggml-vulkan.cpp",
        "    VkBool32 enable_best_practice = layer_settings;\n"
        "    std::vector<vk::LayerSettingEXT> settings = {\n",
        "    // llmbound-exact: Vulkan headers older than VK_EXT_layer_settings (Debian 12 ships\n"
        "    // 1.3.239) lack the validation-layer settings types; create the instance without them\n"
        "#if !defined(VK_EXT_layer_settings)\n"
        "    vk::InstanceCreateInfo instance_create_info(vk::InstanceCreateFlags{}, &app_info, layers, extensions);\n"
        "#else\n"
        "    VkBool32 enable_best_practice = layer_settings;\n"
        "    std::vector<vk::LayerSettingEXT> settings = {\n",
    ),
    (
        "ggml/src/ggml-vulkan/ggml-vulkan.cpp",
        "    vk::InstanceCreateInfo instance_create_info(vk::InstanceCreateFlags{}, &app_info, layers, extensions, &layer_setting_info);\n",
        "    vk::InstanceCreateInfo instance_create_info(vk::InstanceCreateFlags{}, &app_info, layers, extensions, &layer_setting_info);\n"
        "#endif\n",
    ),
    (
        "ggml/src/ggml-vulkan/ggml-vulkan.cpp",
        "            } else {\n"
        "                *free += heap.size;\n"
        "            }\n"
        "        }\n"
        "    }\n"
        "}\n",
        "            } else {\n"
        "                *free += heap.size;\n"
        "            }\n"
        "        }\n"
        "    }\n"
        "    // llmbound-exact: with LLMBOUND_VK_MEM_BYTES set, the device reports that much memory\n"
        "    // (free = total), so the oracle can place onto a device of a chosen size (llvmpipe\n"
        "    // reports a 2 GiB heap)\n"
        "    if (const char * llmbound_mem = getenv(\"LLMBOUND_VK_MEM_BYTES\")) {\n"
        "        *free = *total = (size_t) strtoull(llmbound_mem, nullptr, 10);\n"
        "    }\n"
        "}\n",
    ),
    (
        "ggml/src/ggml-alloc.c",
        "#define AT_PRINTF(...)\n",
        "// llmbound-exact: with LLMBOUND_ALLOC_TRACE set, ggml-alloc's own trace goes to stderr\n"
        "// (every allocation, reuse and free of the graph allocator, in node order)\n"
        "#define AT_PRINTF(...) do { if (getenv(\"LLMBOUND_ALLOC_TRACE\")) fprintf(stderr, __VA_ARGS__); } while (0)\n",
    ),
    (
        "ggml/src/ggml-alloc.c",
        "        hn->buffer_id = buffer_id;\n        hn->addr = ggml_dyn_tallocr_alloc(alloc, size, node);\n",
        "        hn->buffer_id = buffer_id;\n        AT_PRINTF(\"[buf %d] \", buffer_id);\n        hn->addr = ggml_dyn_tallocr_alloc(alloc, size, node);\n",
    ),
    (
        "ggml/src/ggml-alloc.c",
        "static void ggml_gallocr_alloc_graph_impl(ggml_gallocr_t galloc, struct ggml_cgraph * graph, const int * node_buffer_ids, const int * leaf_buffer_ids) {\n",
        "static void ggml_gallocr_alloc_graph_impl(ggml_gallocr_t galloc, struct ggml_cgraph * graph, const int * node_buffer_ids, const int * leaf_buffer_ids) {\n"
        "    AT_PRINTF(\"llmbound-alloc-graph nodes=%d\\n\", graph->n_nodes);\n",
    ),
]


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = Path(sys.argv[1])
    by_file: dict[str, list[tuple[str, str]]] = {}
    for rel, old, new in PATCHES:
        by_file.setdefault(rel, []).append((old, new))
    for rel, edits in by_file.items():
        path = root / rel
        text = path.read_text()
        if MARK in text:
            print(f"{rel}: already patched")
            continue
        for old, new in edits:
            n = text.count(old)
            if n != 1:
                print(f"{rel}: expected one match, found {n}: {old[:80]!r}", file=sys.stderr)
                return 1
            text = text.replace(old, new)
        path.write_text(text)
        print(f"{rel}: patched ({len(edits)} edit(s))")
    return 0


if __name__ == "__main__":
    sys.exit(main())
