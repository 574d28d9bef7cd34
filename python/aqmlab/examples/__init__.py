"""Worked examples importable after install: ``aqmlab.examples.codel:Codel`` is CoDel written as
a Python discipline (docs/python-qdisc.md)."""
