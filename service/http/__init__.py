"""The HTTP edge: blueprints per resource, request and answer schemas, problem+json, auth,
limits, the docs and the spec; the only layer that knows Flask (docs/architecture.md)."""
