"""aqmlab: a laboratory for bottleneck queue management (AQM).

`aqmlab.run(scenario, seed=..., **overrides)` runs a scenario and returns a `Result`;
`aqmlab.sweep(sweep_file, ...)` runs a sweep and returns a pandas table of per-run summaries.
"""

from aqmlab._core import __version__
from aqmlab.api import Result, run
from aqmlab.scenario import ScenarioError
from aqmlab.sweep import SweepError, sweep

__all__ = ["Result", "ScenarioError", "SweepError", "__version__", "run", "sweep"]
