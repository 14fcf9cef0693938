"""Names of the Kubernetes objects the platform makes, and the labels it finds them by.

Kubernetes names are DNS labels (at most 63 of `a-z 0-9 -`; a Service's must
start with a letter) while platform user names may hold '.' and '_' and be 64
long. `slug` maps any text onto a valid label: a name that already is one
passes unchanged, so namespaces read like the user names they serve; any other
becomes a cleaned stem, `--` and a hash of the original. An unchanged name never
contains `--` and a changed one always ends with the hash of its original, so
two inputs never meet on one slug (short of a 32-bit hash collision): the scheme
kubespawner uses for pod names.

Labels select (the controller's watches, NetworkPolicies, sweeps); exact
platform names, which need not be valid label values, travel in annotations.
The Kubeflow names are kept so that Kubeflow's own tools (its culler, its web
app, kubectl users who know Kubeflow) read our objects.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

PLATFORM = "cgu-lab"

# Our labels and annotations.
MANAGED_BY = "app.kubernetes.io/managed-by"
INSTALLATION = "cgu-lab.io/installation"
COMPONENT = "cgu-lab.io/component"  # notebook, vm, training (pods); home, secrets
NOTEBOOK_ID = "cgu-lab.io/notebook-id"
USER = "cgu-lab.io/user"  # slug of the owner, for selection
GROUP = "cgu-lab.io/group"  # slug of the group owning a namespace
OWNER = "cgu-lab.io/owner"  # annotation: the exact platform user name
NOTEBOOK = "cgu-lab.io/notebook"  # annotation: the exact platform notebook name

# Kubeflow's.
STOPPED = "kubeflow-resource-stopped"
LAST_ACTIVITY = "notebooks.kubeflow.org/last-activity"
CREATOR = "notebooks.kubeflow.org/creator"
SERVER_TYPE = "notebooks.kubeflow.org/server-type"
HTTP_REWRITE_URI = "notebooks.kubeflow.org/http-rewrite-uri"
NOTEBOOK_NAME = "notebook-name"  # pod label set by Kubeflow's notebook-controller
STATEFULSET = "statefulset"  # pod label and StatefulSet selector, as Kubeflow sets it
PROFILE_PART_OF = ("app.kubernetes.io/part-of", "kubeflow-profile")
QUOTA_NAME = "kf-resource-quota"
# Each user's course folders (lab files from teachers): one claim per user namespace,
# mounted at ~/courses in all of the user's notebooks.
COURSES_CLAIM = "cgu-courses"

# The training operator's pod labels.
JOB_NAME = "training.kubeflow.org/job-name"
REPLICA_TYPE = "training.kubeflow.org/replica-type"
REPLICA_INDEX = "training.kubeflow.org/replica-index"

_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$")
_HASH_LENGTH = 8
# Notebook objects are at most this long: a StatefulSet's pods carry the label
# `controller-revision-hash: <name>-<10 characters>`, which must fit in 63.
OBJECT_NAME_LENGTH = 52
# A PyTorchJob's pods and Services are named `<job>-worker-<index>`.
JOB_NAME_LENGTH = 48


def slug(text: str, max_length: int = 63, *, letter_first: bool = True) -> str:
    """A valid DNS label for `text`: `text` itself when it already is one, else stem--hash.

    `letter_first` also makes it a valid DNS-1035 label (Service names); turn it
    off where a prefix supplies the leading letter (namespaces).
    """
    if max_length < 2 * _HASH_LENGTH:
        raise ValueError(f"a slug needs room for its hash; {max_length} is too short")
    if (
        len(text) <= max_length
        and _LABEL.match(text)
        and "--" not in text
        and (text[0].isalpha() or not letter_first)
    ):
        return text
    digest = hashlib.sha256(text.encode()).hexdigest()[:_HASH_LENGTH]
    stem = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    if letter_first and not stem[:1].isalpha():
        stem = "x" + stem
    stem = stem[: max_length - _HASH_LENGTH - 2].rstrip("-") or "x"
    return f"{stem}--{digest}"


@dataclass(frozen=True)
class ObjectRef:
    """Where one notebook (or training job) lives: its namespace and object name."""

    namespace: str
    name: str

    @property
    def secret(self) -> str:
        return f"{self.name}-secrets"

    @property
    def home(self) -> str:
        return f"{self.name}-home"


KUBEFLOW_PROFILE_PREFIX = "kubeflow-"
_NOT_PROFILE = re.compile(r"[^a-z0-9]+")


def kubeflow_profile(identity: str) -> str:
    """The namespace Kubeflow gives a user's profile: `kubeflow-` and the identity (an
    e-mail) lower-cased with every run of other characters a '-': user@example.com ->
    kubeflow-user-example-com, as Kubeflow's manifests and dashboard name them. A name
    past 63 characters keeps its start and ends with a hash (`slug`), so it stays a
    valid namespace; two identities that differ only in punctuation meet, as in
    Kubeflow, which is why a namespace found existing must be owned by the user."""
    stem = _NOT_PROFILE.sub("-", identity.lower()).strip("-") or "x"
    name = KUBEFLOW_PROFILE_PREFIX + stem
    if len(name) <= 63 and "--" not in stem:
        return name
    room = 63 - len(KUBEFLOW_PROFILE_PREFIX)
    return KUBEFLOW_PROFILE_PREFIX + slug(identity, room, letter_first=False)


@dataclass(frozen=True)
class Naming:
    """Namespaces per user ("profiles") and per group, and the objects in them.

    `kubeflow` names users' namespaces as Kubeflow names profiles (kubeflow_profile),
    so that Kubeflow's dashboard and web app find the notebooks in them."""

    user_prefix: str = "cgu-u-"
    group_prefix: str = "cgu-g-"
    kubeflow: bool = False

    def user_namespace(self, user: str) -> str:
        if self.kubeflow:
            return kubeflow_profile(user)
        return self.user_prefix + slug(user, 63 - len(self.user_prefix), letter_first=False)

    def group_namespace(self, group: str) -> str:
        return self.group_prefix + slug(group, 63 - len(self.group_prefix), letter_first=False)

    def notebook(self, owner: str, name: str) -> ObjectRef:
        return ObjectRef(self.user_namespace(owner), slug(name, OBJECT_NAME_LENGTH))

    def training(self, owner: str, name: str, group: str | None = None) -> ObjectRef:
        """A job runs in its group's namespace when charged to a group, else its owner's.

        In a group's namespace its name carries the owner so that members never
        collide: "owner.name" splits one way only, as job names hold no '.'.
        """
        if group:
            return ObjectRef(self.group_namespace(group), slug(f"{owner}.{name}", JOB_NAME_LENGTH))
        return ObjectRef(self.user_namespace(owner), slug(name, JOB_NAME_LENGTH))

    def managed(self, namespace: str) -> bool:
        """Whether a namespace name is one of ours (events elsewhere are ignored)."""
        prefixes = (self.user_prefix, self.group_prefix)
        if self.kubeflow:
            prefixes += (KUBEFLOW_PROFILE_PREFIX,)
        return namespace.startswith(prefixes)


def selector(labels: dict[str, str]) -> str:
    """A label selector string matching all of `labels`."""
    return ",".join(f"{key}={value}" for key, value in sorted(labels.items()))
