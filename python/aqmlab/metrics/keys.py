"""What the keys of a run summary are made of: the two directions of a path and the statistics a
distribution is summarised by. Read by the catalogue (which declares the keys) and by the metrics
(which compute their values), so that neither imports the other for them."""

from __future__ import annotations

DIRECTIONS = ("down", "up")
"""The two directions of a path; each has a chain of hops."""
QUANTILES = (50, 75, 95, 99)
"""The percentiles a distribution is summarised by (``metrics.percentiles``)."""
STATS = (*(f"p{q}" for q in QUANTILES), "max", "mean")
"""The keys of ``metrics.percentiles``' dict: the QUANTILES, maximum and mean."""
SHORT_QUANTILES = (50, 95, 99)
"""The percentiles of the web, page-fetch and probe blocks of a summary."""
SHORT_STATS = (*(f"p{q}" for q in SHORT_QUANTILES), "max", "mean")
"""The statistics of the web, page-fetch and probe blocks."""
