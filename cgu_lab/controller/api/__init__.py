"""The shared HTTP layer of the controller's API: who is asking (`deps`), the common
request and response bodies (`schemas`, `schema_types`), event streams (`events`), and
the routes that belong to no one feature (`system`: health and version; `lab`: what
JupyterLab asks on a notebook's origin). Each feature's own router lives in its
package; `controller/routes.py` puts them all under /api.
"""
