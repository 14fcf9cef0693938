"""The notebook proxy: each notebook on its own origin, the log-in hand-off to it,
its websockets, and the replies the proxy writes itself."""
