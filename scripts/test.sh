#!/usr/bin/env bash
# Installs aqmlab with its test extras into ./.venv (building the Rust extension with maturin)
# and runs every check: rustfmt, clippy, the Rust tests, ruff, and the Python tests.
#   bash scripts/test.sh          # the tests of the ray executor skip, saying why
#   bash scripts/test.sh --ray    # also installs ray (a large download) and runs them, as CI does
set -euo pipefail
cd "$(dirname "$0")/.."
extras="test,notebook"
case "${1:-}" in
    --ray) extras="$extras,ray" ;;
    "") echo "note: ray not installed (bash scripts/test.sh --ray installs it); the ray executor's tests will be skipped" ;;
    *) echo "usage: bash scripts/test.sh [--ray]" >&2; exit 2 ;;
esac
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
# Builds the extension in ./target with the release profile (a no-op after `pip install .`).
.venv/bin/pip install -q -e ".[$extras]"
cargo fmt --all --check
# Release and whole-workspace selections below reuse that build: clippy its build scripts and,
# cargo test, the core and emulator libraries themselves (the dependencies resolve with the
# extension's features only when its package is selected). --tests: the example is linted, not linked.
# No Rust test needs release speed (they run in 7 s in the dev profile, 4 s here); the reason is
# the shared build: a dev build of them costs 220 s of CPU, linking the extension's core 140 s.
cargo clippy --release -p aqmlab-core -p aqmlab-emu --all-targets -- -D warnings
cargo test --release --workspace --tests
.venv/bin/ruff check .
.venv/bin/ruff format --check .
# One worker per core (pytest-xdist), each test file on one worker: a file's module fixtures
# (a study run, a built wheel) are computed once, and the emulator's tests, which bound how fast
# a real run stops, share their worker with no other test of theirs. -rs: each skip says why.
# Then the tests marked `alone` (the kernel matrix's short form), one at a time with nothing
# beside them: the kernel's queues follow its hosts' timing, which other work on the CPUs moves.
.venv/bin/pytest -q -rs -n auto --dist loadfile -m "not alone"
.venv/bin/pytest -q -rs -m alone
