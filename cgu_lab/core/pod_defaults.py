"""Which of Kubeflow's PodDefaults ("configurations") a notebook's owner may choose, and the
labels the choice puts on the notebook.

Kubeflow's web app offers the PodDefaults of the owner's namespace on its notebook form
and writes the chosen ones' selector labels onto the Notebook; Kubeflow's admission
webhook then applies each PodDefault to the pod those labels reach. The choice is kept
with the notebook as {name: labels}, as the labels were when chosen (Kubeflow's web app
also writes them once, at creation), so that building what a backend runs needs no call
to the cluster. Decided here without I/O: the offer is read by the backend.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .errors import Invalid

MAX_CHOSEN = 20  # more than a namespace's configurations ever are; bounds the request

Chosen = dict[str, dict[str, str]]


def choose(offered: Sequence[Mapping[str, Any]], names: Iterable[str]) -> Chosen:
    """The chosen PodDefaults' selector labels by name, from what the owner is offered.

    A name not offered (a mistype, one deleted since the form loaded, or one in someone
    else's namespace: only the owner's are offered) is refused with the names that are,
    so a student can correct the choice. Two PodDefaults asking one label for different
    values cannot both reach the pod, so choosing both is refused too.
    """
    by_name = {str(item["name"]): dict(item.get("labels") or {}) for item in offered}
    wanted = sorted(set(names))
    if len(wanted) > MAX_CHOSEN:
        raise Invalid(f"choose at most {MAX_CHOSEN} configurations")
    unknown = [name for name in wanted if name not in by_name]
    if unknown:
        choices = ", ".join(f"'{name}'" for name in sorted(by_name)) or "none"
        raise Invalid(
            f"there is no configuration {', '.join(repr(name) for name in unknown)} "
            f"for this notebook's owner to choose; the configurations offered are: {choices}"
        )
    chosen: Chosen = {name: by_name[name] for name in wanted}
    seen: dict[str, tuple[str, str]] = {}
    for name, labels in chosen.items():
        for key, value in labels.items():
            other = seen.setdefault(key, (name, value))
            if other[1] != value:
                raise Invalid(
                    f"configurations '{other[0]}' and '{name}' need different values of "
                    f"the label '{key}'; choose one of them"
                )
    return chosen


def pod_labels(chosen: Mapping[str, Mapping[str, str]] | None) -> dict[str, str]:
    """The labels a notebook carries for its chosen PodDefaults (`choose` made them agree)."""
    labels: dict[str, str] = {}
    for name in sorted(chosen or {}):
        labels.update(chosen[name])
    return labels
