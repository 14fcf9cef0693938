"""Domain rules with no I/O.

Everything here is a pure function or a small immutable value: a quota check,
a permission decision, a name rule, a state transition. The controller and
the backends call these rules; they never reach a database, a socket or a
process from here, so every rule is tested without a server.
"""
