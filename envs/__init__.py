"""The sorogym environment suite (installed as ``sorogym.envs``): one module per task."""
