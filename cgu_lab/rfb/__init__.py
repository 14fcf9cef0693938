"""The remote framebuffer protocol (VNC) as the platform filters it: a read-only viewer
of a desktop or a VM's screen watches and never types (`filter`), over the screen
messages it must understand (`screen`). The server extension's desktop and the local
backend's VM console both relay through it, so this package imports neither side.
"""
