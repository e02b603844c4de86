"""A rigid box sliding, spinning and tumbling on a plane: sorogym's contact layer against
MuJoCo (``sorogym.testing.compare_box_on_plane``). Writes
``results/contact/box_on_plane_mujoco.{json,md}`` and prints the table.

    .venv/bin/python scripts/compare_contact_mujoco.py [--cases NAME ...] [--out DIR]
    .venv/bin/python scripts/compare_contact_mujoco.py --smoke --out /tmp/box   # slide_and_spin only

``--smoke`` runs the ``slide_and_spin`` case and writes ``box_on_plane_mujoco_smoke.*``.
"""

from __future__ import annotations

import argparse
import json
import pathlib

import jax

jax.config.update("jax_enable_x64", True)

from sorogym.provenance import run_metadata  # noqa: E402
from sorogym.testing import BOX_CASES, BOX_TOLERANCES, compare_box_on_plane  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parents[1] / "results" / "contact"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", nargs="+", choices=sorted(BOX_CASES), help="default: all")
    ap.add_argument("--out", type=pathlib.Path, default=OUT)
    ap.add_argument("--smoke", action="store_true", help="the slide_and_spin case only")
    args = ap.parse_args(argv)
    cases = args.cases or (["slide_and_spin"] if args.smoke else list(BOX_CASES))
    stem = "box_on_plane_mujoco" + ("_smoke" if args.smoke else "")
    rows = [compare_box_on_plane(case) for case in cases]
    args.out.mkdir(parents=True, exist_ok=True)
    notes = "tolerances: the bounds tests/test_contact_laws.py asserts on the same cases"
    meta = run_metadata(args.smoke, ("jax", "mujoco"), notes)
    payload = {"meta": meta, "tolerances": BOX_TOLERANCES, "rows": rows}
    (args.out / f"{stem}.json").write_text(json.dumps(payload, indent=1))
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
    (args.out / f"{stem}.md").write_text(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
