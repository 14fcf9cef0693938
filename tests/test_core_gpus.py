"""GPU placement: best fit, no mixing of offers on a device, one node per request."""

from cgu_lab.core.gpus import Device, Holding, Offer, capacity, place

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
