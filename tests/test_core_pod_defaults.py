"""core.pod_defaults: a notebook's choice of Kubeflow PodDefaults ("configurations")
against what its owner is offered, and the labels the choice puts on the notebook."""

import pytest

from cgu_lab.core.errors import Invalid
from cgu_lab.core.pod_defaults import MAX_CHOSEN, choose, pod_labels

OFFERED = [
    {"name": "add-gcp-secret", "desc": "Add the GCP secret", "labels": {"add-gcp-secret": "true"}},
    {"name": "mlflow", "desc": "Track runs in MLflow", "labels": {"mlflow-server": "course"}},
    {"name": "mlflow-dev", "desc": "MLflow (dev)", "labels": {"mlflow-server": "dev"}},
]


def test_the_choice_keeps_each_ones_selector_labels_and_they_merge_onto_the_notebook():
    chosen = choose(OFFERED, ["mlflow", "add-gcp-secret", "mlflow"])
    assert chosen == {
        "add-gcp-secret": {"add-gcp-secret": "true"},
        "mlflow": {"mlflow-server": "course"},
    }
    assert pod_labels(chosen) == {"add-gcp-secret": "true", "mlflow-server": "course"}
    assert choose(OFFERED, []) == {} and pod_labels(None) == {}


def test_a_name_not_offered_is_refused_with_what_is():
    with pytest.raises(Invalid) as refused:
        choose(OFFERED, ["add-gcp-secret", "staff-only"])
    assert "no configuration 'staff-only'" in refused.value.message
    assert "'add-gcp-secret', 'mlflow', 'mlflow-dev'" in refused.value.message
    with pytest.raises(Invalid) as none:
        choose([], ["anything"])
    assert none.value.message.endswith("the configurations offered are: none")


def test_two_that_need_different_values_of_one_label_cannot_both_be_chosen():
    with pytest.raises(Invalid) as refused:
        choose(OFFERED, ["mlflow", "mlflow-dev"])
    assert "'mlflow' and 'mlflow-dev'" in refused.value.message
    assert "'mlflow-server'" in refused.value.message


def test_at_most_a_bounded_number_is_chosen():
    many = [{"name": f"c{i}", "desc": "", "labels": {f"k{i}": "v"}} for i in range(30)]
    assert len(choose(many, [f"c{i}" for i in range(MAX_CHOSEN)])) == MAX_CHOSEN
    with pytest.raises(Invalid, match=f"at most {MAX_CHOSEN}"):
        choose(many, [f"c{i}" for i in range(MAX_CHOSEN + 1)])
