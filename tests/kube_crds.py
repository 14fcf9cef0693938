"""Which CustomResourceDefinitions the Kubernetes tests install, and how fields are checked.

The project ships its own Notebook CRD (deploy/kubernetes/crds, for clusters
without Kubeflow) and test stand-ins for KubeVirt and the training operator
(deploy/kubernetes/testing). Where the real upstream CRDs are at hand
(`../shared/upstream-crds` beside the repository, as in CI, or the folder named by
CGU_UPSTREAM_CRDS) the cluster tests install those instead, and every object is
written with field validation Strict, so an object the real CRD would refuse fails
the suite. The upstream files are test data only: they are never copied into the
project.

Without them the suite means the same thing, because of two checks in
tests/test_kube_objects.py: every field cgu-lab writes is declared by the project's
CRDs (`unknown_fields`), and every field those declare is declared, with the same
type, by the upstream CRD (`undeclared_upstream`, when the upstream files exist).
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy" / "kubernetes"
# The upstream files, by the kind they define (only the ones the tests install).
UPSTREAM_FILES = {
    "Notebook": "kubeflow.org_notebooks.v1.9.2.yaml.gz",
    "PyTorchJob": "kubeflow.org_pytorchjobs.v1.9.0.yaml.gz",
    "VirtualMachine": "virtualmachines.kubevirt.io.v1.9.0.yaml.gz",
    "VirtualMachineInstance": "virtualmachineinstances.kubevirt.io.v1.9.0.yaml.gz",
}
Schema = dict[str, Any]


def upstream_dir() -> Path | None:
    """The folder holding the upstream CRDs, or None when this checkout has none."""
    configured = os.environ.get("CGU_UPSTREAM_CRDS")
    folder = Path(configured) if configured else ROOT.parent / "shared" / "upstream-crds"
    if all((folder / name).is_file() for name in UPSTREAM_FILES.values()):
        return folder
    return None


def _documents(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as stream:
        return [doc for doc in yaml.safe_load_all(stream) if doc]


def project_crds() -> list[dict]:
    """The project's own Notebook CRD and the test stand-ins."""
    crds = [
        path for path in sorted((DEPLOY / "crds").glob("*.yaml")) if path.stem != "kustomization"
    ]
    paths = [*crds, DEPLOY / "testing" / "crds.yaml"]
    return [doc for path in paths for doc in _documents(path)]


def upstream_crds() -> list[dict]:
    """The real upstream CRDs, or [] without them."""
    folder = upstream_dir()
    if folder is None:
        return []
    crds = []
    for name in UPSTREAM_FILES.values():
        for doc in _documents(folder / name):
            doc["metadata"].pop("creationTimestamp", None)
            crds.append(doc)
    return crds


def crds_for_tests() -> tuple[list[dict], str]:
    """What the cluster tests install: upstream when at hand, else the project's. A kind
    with no upstream file at hand (Kubeflow's PodDefault) is always the project's stand-in."""
    upstream = upstream_crds()
    if upstream:
        kinds = {crd["spec"]["names"]["kind"] for crd in upstream}
        others = [crd for crd in project_crds() if crd["spec"]["names"]["kind"] not in kinds]
        return [*upstream, *others], f"upstream CRDs from {upstream_dir()}"
    return project_crds(), "the project's CRDs and test stand-ins"


def storage_schema(crd: dict) -> Schema:
    version = next(v for v in crd["spec"]["versions"] if v.get("storage"))
    return version["schema"]["openAPIV3Schema"]


def schemas_by_kind(crds: list[dict]) -> dict[str, Schema]:
    return {crd["spec"]["names"]["kind"]: storage_schema(crd) for crd in crds}


# -- fields ------------------------------------------------------------------------------------


def _child(schema: Schema, key: str) -> Schema | None:
    """The schema of field `key` of an object schema; None when the field is not declared."""
    properties = schema.get("properties") or {}
    if key in properties:
        return properties[key]
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        return extra
    if extra is True or schema.get("x-kubernetes-preserve-unknown-fields"):
        return {"x-kubernetes-preserve-unknown-fields": True}
    return None


def unknown_fields(value: Any, schema: Schema, path: str = "") -> Iterator[str]:
    """The fields of `value` that `schema` does not declare: what the API server prunes,
    and refuses with field validation Strict (or in a server-side apply). ObjectMeta is
    the API server's own business (the root's, and an embedded resource's)."""
    if isinstance(value, dict):
        if schema.get("type") not in (None, "object") and not schema.get(
            "x-kubernetes-int-or-string"
        ):
            yield f"{path or '.'} (an object where the schema has {schema.get('type')})"
            return
        for key, item in value.items():
            at = f"{path}.{key}"
            if (not path or schema.get("x-kubernetes-embedded-resource")) and key in (
                "apiVersion",
                "kind",
                "metadata",
            ):
                continue
            child = _child(schema, key)
            if child is None:
                yield at
            else:
                yield from unknown_fields(item, child, at)
    elif isinstance(value, list):
        items = schema.get("items")
        if schema.get("type") not in (None, "array"):
            yield f"{path} (a list where the schema has {schema.get('type')})"
        elif isinstance(items, dict):
            for index, item in enumerate(value):
                yield from unknown_fields(item, items, f"{path}[{index}]")


def declared_paths(schema: Schema, path: str = "") -> Iterator[tuple[str, Schema]]:
    """Every field path a schema declares ('.spec.template.spec', '.a[*].b', '.m{*}')."""
    for key, child in (schema.get("properties") or {}).items():
        at = f"{path}.{key}"
        yield at, child
        yield from declared_paths(child, at)
    if isinstance(schema.get("additionalProperties"), dict):
        at = f"{path}{{*}}"
        yield at, schema["additionalProperties"]
        yield from declared_paths(schema["additionalProperties"], at)
    if isinstance(schema.get("items"), dict):
        at = f"{path}[*]"
        yield at, schema["items"]
        yield from declared_paths(schema["items"], at)


def _find(schema: Schema, path: str) -> Schema | None:
    """The node of `schema` at a path of `declared_paths`' form; None when undeclared."""
    node = schema
    for part in path.replace("[*]", ".[*]").replace("{*}", ".{*}").split(".")[1:]:
        if node.get("x-kubernetes-preserve-unknown-fields") and not (
            node.get("properties") or node.get("items") or node.get("additionalProperties")
        ):
            return node  # anything goes below
        if part == "[*]":
            node = node.get("items")
        elif part == "{*}":
            extra = node.get("additionalProperties")
            node = extra if isinstance(extra, dict) else None
        else:
            node = _child(node, part)
        if node is None:
            return None
    return node


def undeclared_upstream(ours: Schema, upstream: Schema) -> list[str]:
    """Paths our schema declares that the upstream one lacks or types differently."""
    problems = []
    for path, node in declared_paths(ours):
        if path.startswith(".metadata") or path.startswith(".status"):
            continue
        found = _find(upstream, path)
        if found is None:
            problems.append(f"{path} is not declared upstream")
        elif node.get("type") and found.get("type") and node["type"] != found["type"]:
            problems.append(f"{path} is {node['type']} here but {found['type']} upstream")
    return problems
