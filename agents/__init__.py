"""Training and evaluation (installed as ``sorogym.agents``)."""

from ._compat import brax_needs_compat, install_brax_compat

__all__ = ["brax_needs_compat", "install_brax_compat"]
