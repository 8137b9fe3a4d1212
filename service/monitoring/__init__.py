"""Watching the service run (DESIGN.md, "Operations"): Prometheus metrics shared by every
process of a deployment (``metrics``, their files' directory ``metrics_dir``), and the request
id and JSON log lines (``logs``). The HTTP edge serves them (service.http.observing,
service.http.resources.probes); nothing here knows Flask.
"""
