"""aqmlab: a laboratory for bottleneck queue management (AQM).

`aqmlab.run(scenario, seed=..., **overrides)` runs a scenario and returns a `Result`.
"""

from aqmlab._core import __version__
from aqmlab.api import Result, run
from aqmlab.scenario import ScenarioError

__all__ = ["Result", "ScenarioError", "__version__", "run"]
