"""A rigid box sliding, spinning and tumbling on a plane: sorogym's contact layer against
MuJoCo (``sorogym.testing.compare_box_on_plane``). Writes
``results/contact/box_on_plane_mujoco.{json,md}`` and prints the table.

    .venv/bin/python scripts/compare_contact_mujoco.py
"""

from __future__ import annotations

import json
import pathlib

import jax

jax.config.update("jax_enable_x64", True)

from sorogym.provenance import run_metadata  # noqa: E402
from sorogym.testing import BOX_CASES, BOX_TOLERANCES, compare_box_on_plane  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parents[1] / "results" / "contact"


def main():
    rows = [compare_box_on_plane(case) for case in BOX_CASES]
    OUT.mkdir(parents=True, exist_ok=True)
    notes = "tolerances: the bounds tests/test_contact_laws.py asserts on the same cases"
    meta = run_metadata(False, ("jax", "mujoco"), notes)
    payload = {"meta": meta, "tolerances": BOX_TOLERANCES, "rows": rows}
    (OUT / "box_on_plane_mujoco.json").write_text(json.dumps(payload, indent=1))
    lines = [
        "| case | T [s] | travel [m] | position error [m] | relative | rotation error [rad] | face up (MuJoCo / us) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['case']} | {r['duration_s']:g} | {r['travel_m']:.4f} | {r['position_error_m']:.4f} | "
            f"{r['position_error_rel']:.3f} | {r['rotation_error_rad']:.3f} | "
            f"{r['mujoco_face_up']} / {r['sorogym_face_up']} |"
        )
    table = "\n".join(lines)
    (OUT / "box_on_plane_mujoco.md").write_text(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
