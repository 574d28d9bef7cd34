"""Fuzz campaign of the scenario path: N random mutations (1-3 keys each, seeded) of a valid
scenario, each applied through ``--set``'s ``set_key`` (half as TOML text parsed like ``--set``,
half as Python values the API accepts) and validated as ``aqmlab validate`` does. Counts answers
that validate, clean errors naming the key, errors without the key, and tracebacks (any other
exception). Too slow for the default test suite (tests/python/test_fuzz.py is the short
property-based version of the same rule).

    python bench/fuzz_scenarios.py [--cases 100000] [--seed 1] [--show 5]
"""

from __future__ import annotations

import argparse
import collections
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "python"))

import scenario_fuzz as F

from aqmlab.scenario import ScenarioError, parse_value


def value(rng: random.Random):
    if rng.random() < 0.5:
        v = rng.choice(F.STRINGS + [repr(x) for x in F.OTHER[:10]] + ["1979-05-27", "[" * 3000])
        return parse_value(v)
    return rng.choice(F.STRINGS + F.OTHER)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--show", type=int, default=5, help="examples shown per failure class")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    counts: collections.Counter[str] = collections.Counter()
    examples: dict[str, list[str]] = collections.defaultdict(list)
    t0 = time.perf_counter()
    for _ in range(a.cases):
        sc, paths = F.BASE, []
        try:
            for _ in range(rng.randint(1, 3)):
                paths.append(rng.choice(F.KEYS))
                sc = F.apply(sc, paths[-1], value(rng))
            counts[F.check(sc, paths)] += 1
        except ScenarioError as e:  # set_key refused the path itself
            ok = any(F.key_named(str(e), p) for p in paths)
            counts["error" if ok else "no key"] += 1
            if not ok:
                examples["no key"].append(f"{paths}: {e}")
        except AssertionError as e:
            counts["no key"] += 1
            examples["no key"].append(str(e))
        except Exception as e:  # noqa: BLE001 - the campaign counts every escape
            counts["traceback"] += 1
            examples["traceback"].append(f"{paths}: {type(e).__name__}: {e}"[:300])
    wall = time.perf_counter() - t0
    print(
        f"{a.cases} cases (seed {a.seed}) in {wall:.1f} s: "
        + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    )
    for k in ("traceback", "no key"):
        print(f"{k}: {counts[k]}")
        for ex in collections.Counter(examples[k]).most_common(a.show):
            print(f"  {ex[1]}x {ex[0]}")
    sys.exit(1 if counts["traceback"] or counts["no key"] else 0)


if __name__ == "__main__":
    main()
