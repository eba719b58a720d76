"""``lockscope watch``: wait-event sampling, recording and the Prometheus exporter."""

#: Default TCP port of ``lockscope watch --prometheus`` (bound on 127.0.0.1 unless a host is given). Not 9187
#: (postgres_exporter's default, which collides when both run on one host); 9855 is used by no Prometheus exporter
#: we know of (docs/monitoring.md says how it was chosen).
DEFAULT_PORT = 9855
