"""Notebooks: what they are (queries) and creating, changing and deleting them.

The database holds what each notebook should be; the backend makes it so.
This service owns the records. The work around them lives beside it, split the
way JupyterHub splits user, spawner and proxy:

- `notebook_routes`: the proxy's route table, and `reconcile` at controller start;
- `notebook_admission`: GPU admission, reclaim and the queue;
- `notebook_lifecycle`: start, stop, resize, restart and their progress
  (with `notebook_transitions` writing what each decision changes in its
  transaction, and `notebook_seed` copying a template's files in at the first start).

The service builds the three and holds them as `routes`, `admission` and
`lifecycle`; callers use them directly.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from ...backends.base import Backend, NotebookSpec
from ...core import roles
from ...core.errors import Conflict, DomainError, Forbidden, Invalid, NotFound
from ...core.lifecycle import State
from ...core.names import check_label
from ...core.resources import Resources
from ...store.db import Database
from ...store.models import Group, Membership, Notebook, User
from .. import audit
from ..accounts.directory import get_user
from ..clock import Clock
from ..environments import catalog
from ..gpus.pool import GpuPool
from ..progress import ProgressBroker
from ..quotas import service as quotas
from .admission import NotebookAdmission
from .lifecycle import NotebookLifecycle
from .pod_defaults import chosen as chosen_pod_defaults
from .routes import RouteTable, base_path
from .schemas import NotebookOut
from .specs import NotebookSpecs, load_notebook, validated_resources


@dataclass(frozen=True)
class NotebookRequest:
    """A notebook to create. None (cpu, memory, environment) means the default.

    `template` (at `template_version`, else its latest) supplies resources and
    files for what is left unset. `seed` names files to copy into the home before
    the first start (a template version or a submission). `starting` is "create
    and start": the start's own refusals are checked in the creating transaction.
    """

    name: str
    owner: str | None = None
    display_name: str = ""
    environment: str | None = None
    cpu: str | float | None = None
    memory: str | int | None = None
    gpu_type: str | None = None
    gpus: int = 0
    group: str | None = None
    persistent: bool = False
    template: str | None = None
    template_version: int | None = None
    seed: dict | None = None
    kind: str = "jupyter"
    image: str = ""
    starting: bool = False
    # The submission this is a TA's copy of: one copy per owner and submission.
    submission: int | None = None
    # Kubeflow PodDefaults ("configurations") of the owner's namespace to apply.
    pod_defaults: tuple[str, ...] = ()


async def group_names(session: AsyncSession, notebooks: list[Notebook]) -> dict[int, str]:
    """The names of the groups these notebooks are charged to, in one query."""
    ids = {nb.group_id for nb in notebooks if nb.group_id}
    if not ids:
        return {}
    rows = await session.execute(select(Group.id, Group.name).where(Group.id.in_(ids)))
    return dict(rows.all())


async def notebook_out(
    session: AsyncSession, nb: Notebook, owner: str, groups: dict[int, str] | None = None
) -> NotebookOut:
    """One notebook as the API shows it; `groups` from `group_names` saves a query per row."""
    if groups is None:
        groups = await group_names(session, [nb])
    group = groups.get(nb.group_id) if nb.group_id else None
    return NotebookOut(
        owner=owner,
        name=nb.name,
        display_name=nb.display_name,
        environment=nb.environment,
        kind=nb.kind,
        image=nb.image,
        cpu_milli=nb.cpu_milli,
        memory=nb.memory,
        gpu_type=nb.gpu_type,
        gpus=nb.gpus,
        group=group,
        persistent=nb.persistent,
        state=nb.state,
        message=nb.message,
        url=base_path(owner, nb.name) + "lab",
        devices=nb.devices,
        created_at=nb.created_at,
        started_at=nb.started_at,
        stopped_at=nb.stopped_at,
        last_activity=nb.last_activity,
        pod_defaults=sorted(nb.pod_defaults or {}),
    )


@dataclass(frozen=True)
class Followed:
    """Whose a notebook is, for deciding whether a follower of notebook events sees it."""

    owner_id: int
    owner: str
    name: str


class NotebookService:
    def __init__(
        self,
        db: Database,
        backend: Backend,
        broker: ProgressBroker,
        auth,
        settings,
        templates,
        clock: Clock,
    ) -> None:
        """`clock`: the platform's, for the queue's order, reclaim's idle times and the
        lifecycle's start and stop times."""
        self.db = db
        self.backend = backend
        self.settings = settings
        self.templates = templates
        self.gpus = GpuPool(backend)
        self.routes = RouteTable(db, backend)
        self.specs = NotebookSpecs(settings, self.gpus)
        self.admission = NotebookAdmission(
            db,
            settings,
            self.gpus,
            self.routes,
            broker,
            lambda owner, name: self.lifecycle.start(None, owner, name, from_queue=True),
            clock,
        )
        self.lifecycle = NotebookLifecycle(
            db, backend, settings, self.routes, self.specs, broker, auth, self.admission, clock
        )

    # The reading every caller shares (specs.py holds it, for the lifecycle's pieces too).
    load = staticmethod(load_notebook)
    validated_resources = staticmethod(validated_resources)

    async def spec(
        self, session: AsyncSession, nb: Notebook, owner: str, api_token: str = ""
    ) -> NotebookSpec:
        """What the backend needs to run (or find, or stop) the notebook."""
        return await self.specs.spec(session, nb, owner, api_token)

    # -- reading -------------------------------------------------------------

    async def visible(
        self, session: AsyncSession, actor: roles.Principal, owner: str, name: str
    ) -> tuple[Notebook, User]:
        nb, user = await self.load(session, owner, name)
        if not roles.may_manage_notebook(actor, nb.owner_id):
            # Someone else's notebook does not exist, as far as this caller can tell.
            raise NotFound(f"{owner} has no notebook '{name}'")
        return nb, user

    async def list_notebooks(
        self,
        session: AsyncSession,
        actor: roles.Principal,
        owner: str | None = None,
        state: str | None = None,
        query: str = "",
        limit: int = 500,
    ) -> list[tuple[Notebook, str]]:
        statement = select(Notebook, User.name).join(User, User.id == Notebook.owner_id)
        if owner:
            if owner != actor.name and not actor.is_admin:
                raise Forbidden("you may list only your own notebooks")
            statement = statement.where(User.name == owner)
        elif not actor.is_admin:
            statement = statement.where(Notebook.owner_id == actor.id)
        if state:
            statement = statement.where(Notebook.state == State(state).value)
        if query:
            like = f"%{query.lower()}%"
            statement = statement.where(
                func.lower(Notebook.name).like(like) | func.lower(Notebook.display_name).like(like)
            )
        statement = statement.order_by(User.name, Notebook.name).limit(limit)
        return [(nb, owner_name) for nb, owner_name in (await session.execute(statement)).all()]

    async def view(self, actor: roles.Principal, owner: str, name: str) -> NotebookOut:
        """One notebook as the API shows it, if the caller may manage it (else NotFound)."""
        return (await self.view_with_id(actor, owner, name))[1]

    async def view_with_id(
        self, actor: roles.Principal, owner: str, name: str
    ) -> tuple[int, NotebookOut]:
        """`view`, with the notebook's id (its progress events are keyed by it)."""
        async with self.db.reading() as session:
            nb, _ = await self.visible(session, actor, owner, name)
            return nb.id, await notebook_out(session, nb, owner)

    async def mine(self, actor: roles.Principal, name: str, owner: str) -> NotebookOut | None:
        """The caller's own notebook `name` as the API shows it (named as `owner`'s);
        None when they have none of that name."""
        async with self.db.reading() as session:
            nb = await session.scalar(
                select(Notebook).where(Notebook.owner_id == actor.id, Notebook.name == name)
            )
            return None if nb is None else await notebook_out(session, nb, owner)

    async def loaded(self, owner: str, name: str) -> Notebook:
        """The notebook (NotFound when there is none), read in a transaction of its own;
        who may see it is the caller's to check."""
        async with self.db.session() as session:
            nb, _ = await self.load(session, owner, name)
        return nb

    async def listed(
        self,
        actor: roles.Principal,
        owner: str | None = None,
        state: str | None = None,
        query: str = "",
    ) -> list[NotebookOut]:
        """The notebooks `list_notebooks` finds, as the API shows them, in one transaction
        that only reads (no writer's turn: a class's starts do not hold up the list)."""
        async with self.db.reading() as session:
            rows = await self.list_notebooks(session, actor, owner, state, query)
            groups = await group_names(session, [nb for nb, _ in rows])
            return [await notebook_out(session, nb, o, groups) for nb, o in rows]

    async def followed(self, notebook_id: int) -> Followed | None:
        """Whose the notebook is (None once deleted), for the notebook events' filter: asked
        for each event of each follower, so it only reads (no writer's turn)."""
        async with self.db.reading() as session:
            row = (
                await session.execute(
                    select(Notebook.owner_id, User.name, Notebook.name)
                    .join(User, User.id == Notebook.owner_id)
                    .where(Notebook.id == notebook_id)
                )
            ).first()
        return Followed(*row) if row is not None else None

    async def names(self, session: AsyncSession, ids: list[int]) -> dict[int, str]:
        """'owner/name' of notebooks by id."""
        if not ids:
            return {}
        rows = await session.execute(
            select(Notebook.id, User.name, Notebook.name)
            .join(User, User.id == Notebook.owner_id)
            .where(Notebook.id.in_(ids))
        )
        return {nb_id: f"{owner}/{name}" for nb_id, owner, name in rows.all()}

    async def free_name(self, session: AsyncSession, owner_id: int, base: str) -> str:
        """`base`, or `base-2`, `base-3`... whichever the owner does not use yet."""
        taken = set(
            (
                await session.scalars(select(Notebook.name).where(Notebook.owner_id == owner_id))
            ).all()
        )
        name, number = base[:60], 2
        while name in taken:
            name = f"{base[:56]}-{number}"
            number += 1
        return name

    # -- creating, changing, deleting ------------------------------------------

    async def create(
        self, actor: roles.Principal, request: NotebookRequest
    ) -> tuple[Notebook, str]:
        """Create a stopped notebook; from a template, its resources and files come with it.

        A seed is copied as the start's first step, so its progress shows on the
        start page. With `request.starting`, the start's own refusals (quota in
        use now, a deactivated owner) are checked in this transaction, so a
        refused request leaves nothing behind. Chosen configurations are checked against
        the backend's offer first, outside the transaction (a call to the cluster).
        """
        pod_defaults = await chosen_pod_defaults(
            self.backend, actor, request.owner or actor.name, request.pod_defaults, request.kind
        )
        async with self.db.session() as session:
            owner_user = await get_user(session, request.owner or actor.name)
            if owner_user.id != actor.id:
                roles.require_admin(actor, "create notebooks for other users")
            if request.persistent:
                roles.require_admin(actor, "mark notebooks persistent")
            if request.template:
                request = await self._from_template(session, actor, owner_user, request)
            nb = await self._new_notebook(session, owner_user, request)
            nb.pod_defaults = pod_defaults or None
            session.add(nb)
            await session.flush()
            if request.starting:
                if not owner_user.active:
                    raise Forbidden(f"the account '{owner_user.name}' is deactivated")
                await quotas.enforce_start(session, nb, owner_user)
            audit.record(
                session,
                actor.name,
                "notebook.created",
                f"notebook:{owner_user.name}/{nb.name}",
                environment=nb.environment,
                cpu_milli=nb.cpu_milli,
                memory=nb.memory,
                gpu_type=nb.gpu_type,
                gpus=nb.gpus,
                group=request.group,
                persistent=request.persistent,
                seed=request.seed,
                pod_defaults=sorted(pod_defaults),
            )
        return nb, owner_user.name

    async def create_started(
        self, actor: roles.Principal, request: NotebookRequest
    ) -> tuple[Notebook, str]:
        """Create a notebook and start it, or leave nothing behind.

        Every "create then start" path (New notebook with Start, a template's Start,
        a TA opening a submission) comes here, so a refusal never leaves a notebook
        nobody asked for: the start's own checks (quota in use now, a deactivated
        owner) run in the creating transaction, and a refusal between the two steps
        (another start took the quota, no GPU of the type) deletes what was created
        before anything was started or copied into a home.
        """
        nb, owner = await self.create(actor, replace(request, starting=True))
        try:
            await self.lifecycle.start(actor, owner, nb.name)
        except DomainError:
            await self.delete(actor, owner, nb.name)
            raise
        return nb, owner

    async def _from_template(
        self, session: AsyncSession, actor: roles.Principal, owner: User, request: NotebookRequest
    ) -> NotebookRequest:
        """The request with what it leaves unset taken from the template's version."""
        chosen, version = await self.templates.version(
            session, actor, request.template, request.template_version
        )
        gpu_type, gpus = request.gpu_type, request.gpus
        if gpu_type is None and not gpus:
            gpu_type, gpus = version.gpu_type, version.gpus
        return replace(
            request,
            environment=request.environment or version.environment,
            cpu=request.cpu if request.cpu is not None else f"{version.cpu_milli}m",
            memory=request.memory if request.memory is not None else version.memory,
            gpu_type=gpu_type,
            gpus=gpus,
            seed={"kind": "template", "id": version.id} if version.files else None,
            name=request.name or await self.free_name(session, owner.id, chosen.name),
        )

    async def _new_notebook(
        self, session: AsyncSession, owner: User, request: NotebookRequest
    ) -> Notebook:
        """Check the request (name, kind, environment, resources, group, quota) and build it."""
        name = check_label((request.name or "").strip().lower(), "notebook")
        self._check_kind(request.kind, request.image)
        env = await catalog.get_environment(session, request.environment)
        catalog.require_runnable(env, self.backend.name, request.image.strip())
        cpu_milli, memory_bytes, gpu_type, gpus = await self.validated_resources(
            session,
            request.cpu if request.cpu is not None else self.settings.default_cpu,
            request.memory if request.memory is not None else self.settings.default_memory,
            request.gpu_type,
            request.gpus,
        )
        group_id = await self._group_id(session, request.group, owner)
        if await session.scalar(
            select(Notebook.id).where(Notebook.owner_id == owner.id, Notebook.name == name)
        ):
            raise Conflict(f"{owner.name} already has a notebook named '{name}'")
        if request.submission is not None:
            copy = await session.scalar(
                select(Notebook.name).where(
                    Notebook.owner_id == owner.id, Notebook.submission_id == request.submission
                )
            )
            if copy is not None:
                raise Conflict(f"{owner.name} already has a copy of this submission: '{copy}'")
        await quotas.enforce_fits(
            session,
            owner.id,
            group_id,
            Resources.for_notebook(cpu_milli, memory_bytes, gpu_type, gpus),
        )
        return Notebook(
            owner_id=owner.id,
            name=name,
            display_name=request.display_name.strip() or name,
            environment=env.name,
            cpu_milli=cpu_milli,
            memory=memory_bytes,
            gpu_type=gpu_type,
            gpus=gpus,
            group_id=group_id,
            persistent=request.persistent,
            state=State.STOPPED.value,
            seed=request.seed,
            kind=request.kind,
            image=request.image.strip(),
            submission_id=request.submission,
        )

    async def _group_id(self, session: AsyncSession, group: str | None, owner: User) -> int | None:
        """The group a notebook counts against; the owner must be one of its members."""
        if not group:
            return None
        target = await session.scalar(select(Group).where(Group.name == group))
        if target is None:
            raise NotFound(f"there is no group '{group}'")
        member = await session.get(Membership, (target.id, owner.id))
        if member is None:
            raise Forbidden(f"{owner.name} is not a member of group '{group}'")
        return target.id

    def _check_kind(self, kind: str, image: str) -> None:
        """VM notebooks and custom images exist only where the backend offers them."""
        offers = self.backend.describe()
        if kind not in ("jupyter", "vm"):
            raise Invalid(
                f"a notebook is 'jupyter' (JupyterLab) or 'vm' (a virtual machine), not '{kind}'"
            )
        if kind == "vm" and not offers.get("vm_notebooks"):
            raise self.backend.unsupported("VM notebooks")
        if image.strip() and not offers.get("custom_images"):
            raise self.backend.unsupported("Custom images")
        if len(image) > 500 or any(c.isspace() for c in image.strip()):
            raise Invalid("an image looks like registry.example.edu/course/notebook:2027")

    async def update(
        self,
        actor: roles.Principal,
        owner: str,
        name: str,
        display_name: str | None = None,
        persistent: bool | None = None,
    ) -> Notebook:
        async with self.db.session() as session:
            nb, _ = await self.visible(session, actor, owner, name)
            changes: dict[str, Any] = {}
            if persistent is not None and persistent != nb.persistent:
                roles.require_admin(actor, "mark notebooks persistent")
                changes["persistent"] = persistent
                nb.persistent = persistent
            if display_name is not None:
                changes["display_name"] = display_name.strip() or nb.name
                nb.display_name = display_name.strip() or nb.name
            if changes:
                audit.record(
                    session, actor.name, "notebook.updated", f"notebook:{owner}/{name}", **changes
                )
        return nb

    async def delete(self, actor: roles.Principal, owner: str, name: str) -> None:
        async with self.db.session() as session:
            nb, _ = await self.visible(session, actor, owner, name)
            if State(nb.state) is not State.STOPPED:
                raise Conflict(f"notebook '{name}' is {nb.state}; stop it before deleting it")
            await session.delete(nb)
            audit.record(session, actor.name, "notebook.deleted", f"notebook:{owner}/{name}")
        self.routes.forget(owner, name)
        await self.backend.remove_storage(owner, name)
