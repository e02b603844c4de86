"""Quiet access to brax (its import prints optional-backend warnings on machines without
``warp``)."""

from __future__ import annotations

import contextlib
import io


def import_brax_envs():
    """``brax.envs``, imported with its optional-backend notices silenced."""
    with contextlib.redirect_stdout(io.StringIO()):
        import brax.envs as brax_envs
    return brax_envs
