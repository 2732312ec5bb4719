#!/usr/bin/env python3
"""The demo: examples/analyze_sales.py on examples/sales.csv in the sandbox
produces the chart and the summary, with correct totals."""

import csv
import decimal
import json
import os
import shutil

import pvtest
from pvtest import expect, expect_eq

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def csv_totals(path):
    """Totals computed independently of pandas, in exact decimals."""
    total_rev, total_units = decimal.Decimal(0), 0
    region, product = {}, {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            rev = decimal.Decimal(row["revenue"])
            units = int(row["units"])
            total_rev += rev
            total_units += units
            for table, key in ((region, row["region"]),
                               (product, row["product"])):
                r, u = table.get(key, (decimal.Decimal(0), 0))
                table[key] = (r + rev, u + units)
    return total_rev, total_units, region, product


def close(a, b):
    return abs(decimal.Decimal(str(a)) - b) <= decimal.Decimal("0.01")


def demo(ctx):
    examples = os.path.join(ctx.source_dir, "examples")
    work = ctx.tmpdir()
    # Copies, so the unprivileged user can read them whatever the source
    # tree's permissions are.
    script = ctx.write(os.path.join(work, "analyze_sales.py"),
                       open(os.path.join(examples, "analyze_sales.py"),
                            "rb").read())
    sales = ctx.write(os.path.join(work, "sales.csv"),
                      open(os.path.join(examples, "sales.csv"), "rb").read())
    out = os.path.join(work, "demo-output")
    run = ctx.run_json(["--input", sales, "--output-dir", out,
                        "--timeout", "120", script], timeout=240)
    pvtest.expect_status(run, "ok", 0)
    # The bundled job does nothing the policy forbids: a run of it is clean
    # (no audit event from ordinary probing by Python, matplotlib, fc-list).
    expect_eq(run.result["violations"], 0,
              f"violations of the demo: {run.result['audit_events'][:5]}")
    expect_eq(run.result["exit_code"], 0, "exit_code")
    expect("wrote summary.json and chart.png" in run.result["stdout"],
           "the program's summary line is missing from stdout")

    arts = pvtest.artifact_map(run)
    expect_eq(sorted(arts), ["chart.png", "summary.json"],
              "artifacts (inputs unchanged, so only the two outputs)")

    chart = os.path.join(out, "chart.png")
    expect(os.path.isfile(chart), f"{chart} was not written")
    with open(chart, "rb") as f:
        expect(f.read(8) == PNG_SIGNATURE, "chart.png is not a PNG")
    expect_eq(arts["chart.png"]["sha256"], pvtest.sha256_file(chart),
              "chart.png sha256 in artifacts vs written file")
    expect_eq(arts["chart.png"]["size_bytes"], os.path.getsize(chart),
              "chart.png size_bytes")
    expect_eq(arts["chart.png"]["mime"], "image/png", "chart.png mime")

    summary_path = os.path.join(out, "summary.json")
    expect(os.path.isfile(summary_path), "summary.json was not written")
    expect_eq(arts["summary.json"]["sha256"],
              pvtest.sha256_file(summary_path), "summary.json sha256")
    summary = json.load(open(summary_path))
    total_rev, total_units, region, product = csv_totals(sales)
    expect(close(summary["total_revenue"], total_rev),
           f"total_revenue {summary['total_revenue']} != CSV {total_rev}")
    expect_eq(summary["total_units"], total_units, "total_units")
    for key, want in (("by_region", region), ("by_product", product)):
        got = summary[key]
        expect_eq(sorted(got), sorted(want), f"{key} keys")
        for name, (rev, units) in want.items():
            expect(close(got[name]["revenue"], rev),
                   f"{key}[{name}] revenue {got[name]['revenue']} != {rev}")
            expect_eq(got[name]["units"], units, f"{key}[{name}] units")


def demo_leaves_inputs(ctx):
    # The output directory holds only the artifacts: no copy of the
    # script or the input.
    work = ctx.tmpdir()
    src = os.path.join(ctx.source_dir, "examples", "analyze_sales.py")
    script = ctx.write(os.path.join(work, "analyze_sales.py"),
                       open(src, "rb").read())
    sales = ctx.write(os.path.join(work, "sales.csv"), open(
        os.path.join(ctx.source_dir, "examples", "sales.csv"), "rb").read())
    out = os.path.join(work, "out")
    run = ctx.run(["run", "--input", sales, "--output-dir", out, script],
                  timeout=240)
    expect_eq(run.returncode, 0, "exit status without --json")
    expect(b"wrote summary.json and chart.png" in run.stdout,
           "program output is streamed to pyvisor's stdout without --json")
    expect_eq(sorted(os.listdir(out)), ["chart.png", "summary.json"],
              "files in --output-dir")
    shutil.rmtree(out)


if __name__ == "__main__":
    pvtest.main([demo, demo_leaves_inputs])
