#!/usr/bin/env bash
# Regenerate src/inputs/profile/builtin.rs from the files in profiles/ (run after adding a preset).
set -euo pipefail
cd "$(dirname "$0")/.."
{
  echo '//! The built-in presets: the files in `profiles/`, embedded in the binary.'
  echo '//! A test checks this list equals the files on disk.'
  echo
  echo '/// (kind folder, file name, contents) of every built-in profile.'
  echo 'pub const BUILTIN: &[(&str, &str, &str)] = &['
  for k in machines models scenarios; do
    for f in $(ls profiles/$k/*.toml | sort); do
      b=$(basename "$f")
      echo "    (\"$k\", \"$b\", include_str!(\"../../../profiles/$k/$b\")),"
    done
  done
  echo '];'
} > src/inputs/profile/builtin.rs
