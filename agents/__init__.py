"""Training and evaluation (installed as ``sorogym.agents``)."""
