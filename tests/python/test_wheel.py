"""Install without a Rust toolchain: the abi3 wheel (maturin, CPython >= 3.11) installs into a
fresh virtual environment whose PATH has no cargo or rustc, and runs the README's main job there.

The wheel is built once per session with ``maturin build --release`` into a temporary directory
(it reuses the release artifacts the editable install left in ``target/``). Skipped when maturin
or cargo is missing here (the build machine needs them; the installing one must not)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    maturin = Path(sys.executable).parent / "maturin"
    if not maturin.exists() or shutil.which("cargo") is None:
        pytest.skip("maturin and cargo are needed to build the wheel")
    out = tmp_path_factory.mktemp("wheel")
    r = subprocess.run([str(maturin), "build", "--release", "--out", str(out)], cwd=REPO,
                       capture_output=True, text=True, check=False)  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    (whl,) = out.glob("*.whl")
    return whl


def test_wheel_is_abi3_for_cpython_311_and_later(wheel):
    # the tag names the oldest CPython the stable ABI build loads in: cp311-abi3
    assert "-cp311-abi3-" in wheel.name, wheel.name


def test_wheel_installs_and_runs_without_cargo(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    no_rust = [d for d in os.environ["PATH"].split(os.pathsep)
               if not (Path(d) / "cargo").exists() and not (Path(d) / "rustc").exists()]  # fmt: skip
    env = {**os.environ, "PATH": os.pathsep.join([str(venv / "bin"), *no_rust]), "CARGO_HOME": "/nonexistent"}
    env.pop("VIRTUAL_ENV", None)
    assert subprocess.run(["sh", "-c", "command -v cargo || command -v rustc"], env=env,
                          capture_output=True, check=False).returncode != 0  # fmt: skip
    pip = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(wheel)], env=env,
                         capture_output=True, text=True, check=False)  # fmt: skip
    assert pip.returncode == 0, pip.stderr[-3000:]
    r = subprocess.run([str(venv / "bin" / "aqmlab"), "run", "rrul_be", "--qdisc", "pfifo,codel", "--warmup", "5",
                        "--out", str(tmp_path / "res")], env=env, cwd=tmp_path, capture_output=True, text=True,
                       check=False)  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    assert "one path, several queue disciplines" in r.stdout
    assert (tmp_path / "res" / "compare-rrul_be-rtt_cdf.png").stat().st_size > 0
    # the installed package is the wheel's, not this checkout's
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import aqmlab; print(aqmlab.__file__)"],
                           env=env, cwd=tmp_path, capture_output=True, text=True, check=True)  # fmt: skip
    assert str(venv) in where.stdout
