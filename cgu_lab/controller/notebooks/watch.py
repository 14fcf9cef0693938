"""Whose notebook changes a staff page may follow, decided as its REST list decides.

The pages that show other people's notebooks (the Users list, an account's page,
a course's Live tab) follow the same stream of state changes as My notebooks
(`api.events.notebook_changes` over the one `ProgressBroker`); only the question
"may this caller hear of that notebook?" differs. Each function here checks the
caller's right once, when the stream opens (a refused caller gets the REST list's
403), and returns the per-notebook question the stream asks for each notebook it
meets, answered from the store as the matching list would answer it:

- every account's notebooks: GET /users (admins: everyone; managers: the members
  of the groups they manage);
- one account's: GET /users/{name} (the user, admins, managers of their groups);
- a course's: GET /groups/{group}/live (its managers: the students' notebooks and
  the notebooks shown to it as live views).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from sqlalchemy import or_, select

from ...core.errors import Forbidden
from ...core.roles import Principal, require_group_manager
from ...store.models import Membership, Notebook, Share, User
from ..accounts.directory import get_group, get_user, require_manages_user
from ..teaching.live import students_notebooks

# A notebook's (owner, name) when the caller may follow it, else None.
Followed = Callable[[int], Awaitable[tuple[str, str] | None]]


def _followed(db, *conditions) -> Followed:
    """Ask the store whether notebook `nb_id` meets `conditions`, and whose it is."""

    async def followed(nb_id: int) -> tuple[str, str] | None:
        async with db.reading() as session:  # for each event: no writer's turn
            row = (
                await session.execute(
                    select(User.name, Notebook.name)
                    .join(User, User.id == Notebook.owner_id)
                    .where(Notebook.id == nb_id, *conditions)
                )
            ).first()
        return None if row is None else (row[0], row[1])

    return followed


async def accounts_watch(platform, actor: Principal, user: str | None = None) -> Followed:
    """The notebooks of the accounts the caller may see, or of the one account `user`."""
    if user is not None:
        async with platform.db.session() as session:
            account = await get_user(session, user)
            await require_manages_user(session, actor, account)
            owner_id = account.id
        return _followed(platform.db, Notebook.owner_id == owner_id)
    if actor.is_admin:
        return _followed(platform.db)
    if not actor.managed_groups:
        raise Forbidden("only administrators and group managers may follow accounts' notebooks")
    managed = select(Membership.user_id).where(Membership.group_id.in_(actor.managed_groups))
    return _followed(platform.db, Notebook.owner_id.in_(managed))


async def course_watch(platform, actor: Principal, group: str) -> Followed:
    """The notebooks a course's Live tab shows: its students' and its live views'.

    A live view started after the stream met its notebook is not followed until the
    stream reconnects (the tab's own Broadcast button reloads it anyway).
    """
    async with platform.db.session() as session:
        target = await get_group(session, group)
        require_group_manager(actor, target.id, target.name)
    students = students_notebooks(target.id).with_only_columns(Notebook.id)
    shown = select(Share.notebook_id).where(Share.group_id == target.id)
    return _followed(platform.db, or_(Notebook.id.in_(students), Notebook.id.in_(shown)))
