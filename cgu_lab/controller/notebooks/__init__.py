"""Notebooks: their service and lifecycle (admission, start, stop, resize), the routes
the proxy forwards by, liveness, the idle culler, state streams, routers and schemas."""
