"""Amounts of CPU, memory and GPUs, and how users write them.

CPU is kept in millicores and memory in bytes so that sums are exact; the
parsers accept what people type in forms and what Kubernetes prints
("500m", "1.5", "2Gi", "512M").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from .errors import Invalid

_MEMORY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]i?b?|b)?\s*$", re.IGNORECASE)
_UNITS = {
    "": 1,
    "b": 1,
    "k": 10**3,
    "m": 10**6,
    "g": 10**9,
    "t": 10**12,
    "p": 10**15,
    "ki": 2**10,
    "mi": 2**20,
    "gi": 2**30,
    "ti": 2**40,
    "pi": 2**50,
}


def parse_cpu(value: str | float | int) -> int:
    """Return millicores for "2", "0.5", 1.5 or "500m"."""
    text = str(value).strip()
    try:
        milli = int(text[:-1]) if text.endswith("m") else round(float(text) * 1000)
    except ValueError:
        raise Invalid(
            f"'{value}' is not a CPU amount: write cores like 2 or 0.5, or 500m"
        ) from None
    if milli <= 0:
        raise Invalid(f"CPU must be more than 0; got '{value}'")
    return milli


def parse_memory(value: str | int) -> int:
    """Return bytes for "2G", "2GiB", "512Mi" or a plain number of bytes."""
    if isinstance(value, int) and not isinstance(value, bool):
        amount = value
    else:
        match = _MEMORY.match(str(value))
        if not match:
            raise Invalid(f"'{value}' is not a memory amount: write it like 2G, 512Mi or 1.5GiB")
        unit = (match.group(2) or "").lower().removesuffix("b")
        amount = int(float(match.group(1)) * _UNITS[unit])
    if amount <= 0:
        raise Invalid(f"memory must be more than 0; got '{value}'")
    return amount


def format_cpu(milli: int) -> str:
    cores = milli / 1000
    return f"{cores:g} CPU" if cores == 1 else f"{cores:g} CPUs"


def format_memory(amount: int) -> str:
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if amount >= size:
            return f"{amount / size:.3g} {unit}"
    return f"{amount} B"


def format_gpus(count: int, gpu_type: str) -> str:
    return f"{count} GPU{'s' if count != 1 else ''} of type '{gpu_type}'"


@dataclass(frozen=True)
class Resources:
    """What a notebook asks for, or what a set of notebooks holds together."""

    cpu_milli: int = 0
    memory: int = 0
    gpus: Mapping[str, int] = field(default_factory=dict)
    notebooks: int = 0

    def __add__(self, other: Resources) -> Resources:
        gpus = dict(self.gpus)
        for name, count in other.gpus.items():
            gpus[name] = gpus.get(name, 0) + count
        return Resources(
            cpu_milli=self.cpu_milli + other.cpu_milli,
            memory=self.memory + other.memory,
            gpus={k: v for k, v in gpus.items() if v},
            notebooks=self.notebooks + other.notebooks,
        )

    @classmethod
    def for_notebook(
        cls, cpu_milli: int, memory: int, gpu_type: str | None, gpus: int
    ) -> Resources:
        """The resources one running notebook holds."""
        return cls(
            cpu_milli=cpu_milli,
            memory=memory,
            gpus={gpu_type: gpus} if gpu_type and gpus else {},
            notebooks=1,
        )

    @classmethod
    def total(cls, items: list[Resources]) -> Resources:
        result = cls()
        for item in items:
            result = result + item
        return result
