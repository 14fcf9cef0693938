"""What the GPUs page reads of the cluster's fleet: its products and the types they offer."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field


@dataclass(frozen=True)
class NodeCount:
    """A node's GPUs as the pool knows them: detected, declared by hand, both, in all."""

    node: str
    detected: int
    declared: int
    declared_and_detected: int
    total: int


class GpuProposalOut(BaseModel):
    """A GPU type ready to save as is (PUT /api/gpu-types/{name} with these fields)."""

    name: str
    display_name: str
    resource_name: str
    share: int
    mig_profile: str
    models: list[str]
    node_selector: dict[str, str]
    capacity: int = Field(description="Notebooks of one GPU each this product could hold")


class GpuProductOut(BaseModel):
    product: str = Field(description="nvidia.com/gpu.product, as GPU Feature Discovery set it")
    memory_mib: int
    archs: list[str] = Field(description="kubernetes.io/arch of its nodes")
    nodes: list[str] = Field(description="Schedulable nodes with this product")
    unschedulable: list[str] = Field(
        description="Nodes with it that take no notebooks now: cordoned or not Ready"
    )
    gpus: int = Field(description="Physical GPUs on schedulable nodes")
    whole: int = Field(description="Allocatable whole GPUs (nvidia.com/gpu)")
    replicas: int = Field(description="Time-slices per GPU (0: not time-sliced)")
    slices: int = Field(description="Allocatable time-slices")
    slice_resource: str
    mig_strategy: str
    mig: dict[str, int] = Field(description="MIG profile -> allocatable instances")
    notes: list[str] = Field(description="What keeps part of it from being offered well")
    proposals: list[GpuProposalOut] = Field(description="GPU types this product can back")
    existing_types: list[str] = Field(description="GPU types already selecting this product")


class GpuFleetOut(BaseModel):
    backend: str
    products: list[GpuProductOut]
