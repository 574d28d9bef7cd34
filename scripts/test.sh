#!/usr/bin/env bash
# Installs aqmlab with its test extras into ./.venv (building the Rust extension with maturin)
# and runs every check: rustfmt, clippy, the Rust tests, ruff, and the Python tests.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/pip install -q --upgrade pip
.venv/bin/pip install -q -e ".[test,ray,notebook]"
cargo fmt --all --check
cargo clippy -p aqmlab-core --all-targets -- -D warnings
cargo test -p aqmlab-core --release
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/pytest -q
