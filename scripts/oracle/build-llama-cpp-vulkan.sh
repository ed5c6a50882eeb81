#!/usr/bin/env bash
# Build llama.cpp's llama-fit-params with the Vulkan backend (oracle only, never in CI), in a
# build directory of its own ($LLAMA_CPP_ROOT/src/build-vulkan) beside the CPU + RPC build of
# build-llama-cpp.sh, from the same pinned, patched source tree. On a machine without a GPU it
# runs on Mesa's llvmpipe (a software Vulkan device): a real GPU backend with op offload and
# pinned host buffers, whose reported memory the patch makes settable (LLMBOUND_VK_MEM_BYTES;
# llvmpipe itself reports a 2 GiB heap). scripts/oracle/placement_vulkan.py records the
# fixtures with it. Run the binary with GGML_VK_VISIBLE_DEVICES=0.
#
#   scripts/oracle/build-llama-cpp-vulkan.sh
#   LLAMA_CPP_ROOT=/elsewhere JOBS=4 scripts/oracle/build-llama-cpp-vulkan.sh
#
# Needs (Debian): apt-get update && apt-get install -y libvulkan-dev glslc mesa-vulkan-drivers vulkan-tools
# spirv-headers (b11434 finds SPIRV-Headers by its CMake config),
# plus what build-llama-cpp.sh needs. The shader generation step is long (tens of minutes on
# two cores); the build runs at the lowest priority (nice -n 19).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
version="$(cat "$here/LLAMA_CPP_VERSION")"
root="${LLAMA_CPP_ROOT:-/work/llama-cpp}"
jobs="${JOBS:-2}"
build_number="${version%%.*}"
src="$root/src"

for tool in glslc cmake; do
    command -v "$tool" >/dev/null || { echo "$tool not found (apt-get install -y libvulkan-dev glslc mesa-vulkan-drivers spirv-headers cmake)" >&2; exit 1; }
done
[ -f /usr/include/vulkan/vulkan.hpp ] || { echo "no Vulkan headers (apt-get install -y libvulkan-dev)" >&2; exit 1; }

# The source tree (download, extraction, patch) is build-llama-cpp.sh's; reuse it when present.
if [ ! -f "$src/.llmbound-version" ] || [ "$(cat "$src/.llmbound-version")" != "$version" ]; then
    echo "no llama.cpp $version source tree at $src: run build-llama-cpp.sh first" >&2
    exit 1
fi
python3 "$here/patch_llama_cpp.py" "$src"

nice -n 19 cmake -S "$src" -B "$src/build-vulkan" -DCMAKE_BUILD_TYPE=Release \
    -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_BUILD_SERVER=OFF -DGGML_NATIVE=OFF -DGGML_VULKAN=ON \
    -DLLAMA_BUILD_NUMBER="$build_number" >/dev/null
nice -n 19 cmake --build "$src/build-vulkan" --target llama-fit-params -j "$jobs"

GGML_VK_VISIBLE_DEVICES=0 "$src/build-vulkan/bin/llama-fit-params" --version
echo "llama-fit-params (Vulkan): $src/build-vulkan/bin/llama-fit-params"
