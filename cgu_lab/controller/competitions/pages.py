"""The competition pages: the list of my courses' competitions and one competition.

Its own router (like teaching/pages.py) because it is one feature's. The
description is rendered here, on the server, from the teacher's Markdown with
raw HTML escaped (competitions.render_markdown), so the page's scripts never
parse HTML; everything else the page shows comes from the API.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from ..page_kit import page, platform_of, render, shell_pages

router = APIRouter(include_in_schema=False)
shell_pages(router, ("/competitions", "competitions", "Competitions", ""))


@router.get("/competitions/{competition_id}")
async def competition_page(request: Request, competition_id: int) -> Response:
    identity = await page(request)
    platform = platform_of(request)
    principal = await platform.auth.principal(identity)
    competition = await platform.competitions.get(principal, competition_id)
    return await render(
        request,
        "competition.html",
        competition.title,
        identity,
        "competitions",
        competition=competition,
    )
