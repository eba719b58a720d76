"""Throughput forecast for relation-lock traffic: a closed queueing model (:mod:`lockscope.forecast.model`, pure)
and its calibration (:mod:`lockscope.forecast.calibration`, JSON ``lockscope/calibration/v2``). See
docs/forecast.md."""
