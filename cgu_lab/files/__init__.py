"""Trees of files as both sides of the platform handle them: safe names inside a root
(`names`), a zip streamed without building it (`zipstream`), the bytes a tree holds
(`usage`). The server extension's transfers and the platform's storage tool both use
them, so this package imports neither side.
"""
