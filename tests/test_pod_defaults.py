"""Configurations (Kubeflow PodDefaults) on a platform that has none: the local backend.

The notebook form asks GET /api/pod-defaults on every platform; here the answer is an
empty list (the form then shows no choice), and a notebook naming one is refused with a
400 that says none is offered, never a 500 or a 501. Offering, choosing and applying
them on a real API server: tests/test_kubernetes_backend.py and test_kube_controller.py.
"""


def test_none_are_offered_and_only_the_owner_or_an_admin_may_ask(alice, admin):
    assert alice.ok("GET", "/api/pod-defaults") == []
    assert alice.ok("GET", "/api/pod-defaults?owner=alice") == []
    refused = alice.get("/api/pod-defaults?owner=bob")
    assert refused.status_code == 403 and refused.json()["code"] == "forbidden"
    assert admin.ok("GET", "/api/pod-defaults?owner=bob") == []
    bad = alice.get("/api/pod-defaults?owner=Not%20A%20User")
    assert bad.status_code == 400


def test_a_notebook_naming_one_is_refused_with_a_sentence(alice):
    refused = alice.post(
        "/api/notebooks", json={"name": "conf", "memory": "1Gi", "pod_defaults": ["gcp-secret"]}
    )
    assert refused.status_code == 400, refused.text
    assert refused.json()["code"] == "invalid"
    assert "no configuration 'gcp-secret'" in refused.json()["message"]
    assert "offered are: none" in refused.json()["message"]
    assert alice.get("/api/notebooks/alice/conf").status_code == 404  # nothing left behind

    malformed = alice.post(
        "/api/notebooks", json={"name": "conf", "memory": "1Gi", "pod_defaults": ["Not_A_Name"]}
    )
    assert malformed.status_code == 400 and "pod_defaults" in malformed.json()["message"]
    many = alice.post(
        "/api/notebooks",
        json={"name": "conf", "memory": "1Gi", "pod_defaults": [f"c{i}" for i in range(21)]},
    )
    assert many.status_code == 400


def test_a_notebook_runs_with_none_and_a_resize_may_say_so_again(alice, bob):
    made = alice.ok("POST", "/api/notebooks", 201, json={"name": "plain", "memory": "1Gi"})
    assert made["pod_defaults"] == []
    kept = alice.ok("PATCH", "/api/notebooks/alice/plain", json={"pod_defaults": []})
    assert kept["pod_defaults"] == [] and kept["state"] == "stopped"
    refused = alice.patch("/api/notebooks/alice/plain", json={"pod_defaults": ["gcp-secret"]})
    assert refused.status_code == 400 and "no configuration" in refused.json()["message"]
    # Someone else's notebook does not exist for bob, whatever he names.
    hidden = bob.patch("/api/notebooks/alice/plain", json={"pod_defaults": ["gcp-secret"]})
    assert hidden.status_code == 404
    alice.ok("DELETE", "/api/notebooks/alice/plain")
