"""Real-time collaboration (jupyter-collaboration) under the platform's share rules.

guard.py filters each room connection by its caller's access; protocol.py reads the
Yjs messages it must judge; handlers.py reports who is connected, for the culler and
the owner's viewer count.
"""

from .guard import SETTING, Connection, Presence, attach

__all__ = ["SETTING", "Connection", "Presence", "attach"]
