#!/usr/bin/env bash
# Installs aqmlab with its test extras into ./.venv (building the Rust extension with maturin)
# and runs every check: rustfmt, clippy, the Rust tests, ruff, and the Python tests.
set -euo pipefail
cd "$(dirname "$0")/.."
# The emulator's tests run real tools between network namespaces: install them when root
# (tests/python/test_emulate.py skips, saying why, when not root).
if [ "$(id -u)" = 0 ]; then
    missing=""
    for pkg_cmd in iperf3:iperf3 irtt:irtt iproute2:ip iputils-ping:ping; do
        command -v "${pkg_cmd#*:}" >/dev/null || missing="$missing ${pkg_cmd%%:*}"
    done
    if [ -n "$missing" ]; then
        DEBIAN_FRONTEND=noninteractive apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
    fi
else
    echo "note: not root; the emulator's tests (tests/python/test_emulate.py) will be skipped"
fi
python3 -m venv .venv
.venv/bin/pip install -q --upgrade pip
.venv/bin/pip install -q -e ".[test,ray,notebook]"
cargo fmt --all --check
cargo clippy -p aqmlab-core -p aqmlab-emu --all-targets -- -D warnings
cargo test -p aqmlab-core -p aqmlab-emu --release
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/pytest -q -rs  # -rs: each skipped test says why
