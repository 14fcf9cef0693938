"""The controller: the service that owns accounts, quotas and notebooks.

It serves the REST API (`api/`), the web pages (each feature's `pages.py`, built
with `page_kit.py`) and, on the local backend, the reverse proxy in front of every
notebook (`proxy/`). Business rules come from `cgu_lab.core`; storage from
`cgu_lab.store`; processes or pods from a backend in `cgu_lab.backends`.
"""
