"""Kubeflow's PodDefaults ("configurations") on the notebook form: what an owner is offered,
and their choice checked against it (core.pod_defaults decides).

The offer is the backend's (the PodDefaults of the owner's namespace). Where there can be
none (the local backend, a cluster without Kubeflow's PodDefault API) it is empty rather
than an error: "nothing to choose" is the true answer for the form, which then shows no
choice, and a notebook naming one there is refused as naming one not offered.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...backends.base import Backend
from ...core import pod_defaults as rules
from ...core.errors import Forbidden, Invalid, NotSupported
from ...core.roles import Principal
from .schemas import PodDefaultOut


async def offered(backend: Backend, actor: Principal, owner: str) -> list[PodDefaultOut]:
    """The PodDefaults `owner` may choose, by name and description, as the form lists them."""
    return [
        PodDefaultOut(name=item["name"], desc=item["desc"])
        for item in await _offer(backend, actor, owner)
    ]


async def _offer(backend: Backend, actor: Principal, owner: str) -> list[dict[str, Any]]:
    """The backend's PodDefaults for `owner`, each {name, desc, labels} as
    `Backend.pod_defaults` describes them (core.pod_defaults reads their labels); only the
    owner and admins may see them (they name what is in the owner's namespace)."""
    if owner != actor.name and not actor.is_admin:
        raise Forbidden("you may see only the configurations of your own notebooks")
    try:
        return await backend.pod_defaults(owner)
    except NotSupported:
        return []


async def chosen(
    backend: Backend, actor: Principal, owner: str, names: Iterable[str], kind: str
) -> rules.Chosen:
    """The choice of `names` for a notebook of `owner` of `kind`, checked against the offer;
    no call to the backend when nothing is chosen."""
    names = list(names)
    if not names:
        return {}
    if kind != "jupyter":
        raise Invalid("configurations (Kubeflow PodDefaults) apply to JupyterLab notebooks only")
    return rules.choose(await _offer(backend, actor, owner), names)
