"""GPU placement: best fit, no mixing of offers on a device, one node per request."""

import pytest

from cgu_lab.core.errors import Invalid
from cgu_lab.core.gpus import (
    Device,
    Holding,
    Offer,
    capacity,
    check_gpu_type_resource,
    check_mig_profile,
    expected_resources,
    place,
)

WHOLE = Offer("premium", share=1)
SHARED = Offer("standard", share=4)
HALF = Offer("half", share=1, mig_profile="3g.20gb")


def devices(node="n1", count=2):
    return [
        Device(f"{node}-gpu{i}", node=node, model="NVIDIA RTX A5000", index=i) for i in range(count)
    ]


def test_whole_gpu_is_exclusive():
    gpus = devices()
    first = place(gpus, [], WHOLE, 1)
    second = place(gpus, [Holding(1, "premium", first)], WHOLE, 1)
    assert first != second
    assert (
        place(gpus, [Holding(1, "premium", first), Holding(2, "premium", second)], WHOLE, 1) is None
    )


def test_shared_fills_partly_used_device_first():
    gpus = devices()
    held = [Holding(1, "standard", ("n1-gpu1",))]
    assert place(gpus, held, SHARED, 1) == ("n1-gpu1",)


def test_offers_do_not_mix_on_a_device():
    gpus = devices(count=1)
    assert place(gpus, [Holding(1, "standard", ("n1-gpu0",))], WHOLE, 1) is None
    assert place(gpus, [Holding(1, "premium", ("n1-gpu0",))], SHARED, 1) is None


def test_share_count_is_never_exceeded():
    gpus = devices(count=1)
    held = [Holding(i, "standard", ("n1-gpu0",)) for i in range(4)]
    assert place(gpus, held, SHARED, 1) is None
    assert place(gpus, held[:3], SHARED, 1) == ("n1-gpu0",)


def test_multi_gpu_request_stays_on_one_node():
    gpus = devices("n1", 1) + devices("n2", 2)
    assert place(gpus, [], WHOLE, 2) == ("n2-gpu0", "n2-gpu1")
    assert place(gpus, [], WHOLE, 3) is None


def test_mig_instances_serve_only_their_profile():
    gpus = [
        Device("mig-a", mig_profile="3g.20gb"),
        Device("mig-b", mig_profile="1g.5gb"),
        Device("whole"),
    ]
    assert place(gpus, [], HALF, 1) == ("mig-a",)
    assert place(gpus, [], WHOLE, 1) == ("whole",)


def test_model_filter():
    offer = Offer("v100", models=frozenset({"V100"}))
    gpus = [*devices(), Device("v", model="Tesla V100-SXM2-32GB", index=9)]
    assert place(gpus, [], offer, 1) == ("v",)


def test_capacity():
    assert capacity(devices(count=3), SHARED) == 12
    assert capacity(devices(count=3), HALF) == 0


def test_no_devices_no_placement():
    assert place([], [], WHOLE, 1) is None
    assert place([], [], WHOLE, 0) == ()


# -- what a GPU type may ask Kubernetes for -------------------------------------------------


def test_mig_profile_must_use_its_mig_resource():
    assert check_gpu_type_resource("nvidia.com/mig-3g.20gb", 1, "3g.20gb") == (
        "nvidia.com/mig-3g.20gb"
    )
    with pytest.raises(Invalid) as refused:
        check_gpu_type_resource("nvidia.com/gpu", 1, "3g.20gb")
    assert "nvidia.com/mig-3g.20gb" in refused.value.message
    assert "not nvidia.com/gpu" in refused.value.message
    # Another profile's resource is refused too.
    with pytest.raises(Invalid):
        check_gpu_type_resource("nvidia.com/mig-1g.5gb", 1, "3g.20gb")
    # A shared MIG instance may carry the time-slicing suffix.
    assert check_gpu_type_resource("nvidia.com/mig-1g.5gb.shared", 2, "1g.5gb")
    assert check_gpu_type_resource("nvidia.com/mig-1g.5gb", 2, "1g.5gb")


def test_shared_and_whole_gpus_use_their_own_resources():
    assert check_gpu_type_resource("nvidia.com/gpu", 1, "") == "nvidia.com/gpu"
    assert check_gpu_type_resource("nvidia.com/gpu.shared", 4, "") == "nvidia.com/gpu.shared"
    with pytest.raises(Invalid) as shared_as_whole:
        check_gpu_type_resource("nvidia.com/gpu", 4, "")
    assert "nvidia.com/gpu.shared" in shared_as_whole.value.message
    with pytest.raises(Invalid) as whole_as_shared:
        check_gpu_type_resource("nvidia.com/gpu.shared", 1, "")
    assert "a whole GPU uses the resource nvidia.com/gpu" in whole_as_shared.value.message


def test_a_mig_resource_needs_the_mig_profile():
    with pytest.raises(Invalid) as refused:
        check_gpu_type_resource("nvidia.com/mig-1g.10gb", 1, "")
    assert "set the type's MIG profile to 1g.10gb" in refused.value.message


def test_other_vendors_and_bad_names():
    assert check_gpu_type_resource("amd.com/gpu", 1, "") == "amd.com/gpu"
    for bad in ("gpu", "", " "):
        with pytest.raises(Invalid):
            check_gpu_type_resource(bad, 1, "")


def test_mig_profiles_are_spelled_as_nvidia_does():
    assert check_mig_profile(" 3G.20GB ") == "3g.20gb"
    assert check_mig_profile("1g.10gb+me") == "1g.10gb+me"
    assert check_mig_profile("") == ""
    for bad in ("3g", "half", "3g.20", "nvidia.com/mig-1g.5gb", "0g.5gb"):
        with pytest.raises(Invalid):
            check_mig_profile(bad)


def test_expected_resources_follow_the_kind():
    assert expected_resources(1, "") == ("nvidia.com/gpu",)
    assert expected_resources(3, "") == ("nvidia.com/gpu.shared",)
    assert expected_resources(1, "2g.12gb") == ("nvidia.com/mig-2g.12gb",)
    assert expected_resources(2, "2g.12gb") == (
        "nvidia.com/mig-2g.12gb",
        "nvidia.com/mig-2g.12gb.shared",
    )
