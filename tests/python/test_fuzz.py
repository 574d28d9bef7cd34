"""Property-based fuzz test of the scenario path (hypothesis): any mutation of up to three keys
of a valid scenario, with values of any type TOML or the Python API can carry, either validates
or fails with one line naming a changed key, never anything else. bench/fuzz_scenarios.py runs the
same rule over 100,000+ cases."""

from __future__ import annotations

import scenario_fuzz as F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aqmlab.scenario import ScenarioError, parse_value

values = st.one_of(
    st.sampled_from(F.STRINGS + F.OTHER),
    st.sampled_from(F.STRINGS).map(parse_value),
    st.text(max_size=20).map(parse_value),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.dates(),
)
mutations = st.lists(st.tuples(st.sampled_from(F.KEYS), values), min_size=1, max_size=3)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutations)
def test_every_answer_validates_or_names_a_changed_key(changes):
    sc, paths = F.BASE, []
    try:
        for path, v in changes:
            paths.append(path)
            sc = F.apply(sc, path, v)
    except ScenarioError as e:
        assert any(F.key_named(str(e), p) for p in paths), (paths, str(e))
        return
    assert F.check(sc, paths) in ("ok", "error")
