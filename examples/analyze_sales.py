#!/usr/bin/env python3
"""Summarize sales.csv: revenue and units per region and per product.

Reads sales.csv from the working directory, writes summary.json and
chart.png next to it and prints a short summary.  Runs the same natively
(`cd examples && python3 analyze_sales.py`) and under pyvisor:

    build/pyvisor run --input examples/sales.csv --output-dir demo-output \
        examples/analyze_sales.py
"""

import json

import matplotlib

matplotlib.use("Agg")  # no display, inside the sandbox or not
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402


def totals(frame: pd.DataFrame, key: str) -> dict:
    grouped = frame.groupby(key)[["revenue", "units"]].sum()
    grouped = grouped.sort_values("revenue", ascending=False)
    return {name: {"revenue": round(float(row.revenue), 2),
                   "units": int(row.units)}
            for name, row in grouped.iterrows()}


def main() -> None:
    sales = pd.read_csv("sales.csv", parse_dates=["date"])
    by_region = totals(sales, "region")
    by_product = totals(sales, "product")
    table = sales.pivot_table(index="region", columns="product",
                              values="revenue", aggfunc="sum", fill_value=0)
    region_product = {region: {product: round(float(value), 2)
                               for product, value in row.items()}
                      for region, row in table.iterrows()}

    summary = {
        "rows": int(len(sales)),
        "first_date": sales["date"].min().date().isoformat(),
        "last_date": sales["date"].max().date().isoformat(),
        "total_revenue": round(float(sales["revenue"].sum()), 2),
        "total_units": int(sales["units"].sum()),
        "by_region": by_region,
        "by_product": by_product,
        "region_product_revenue": region_product,
    }
    with open("summary.json", "w", encoding="utf-8") as out:
        json.dump(summary, out, indent=2)
        out.write("\n")

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
    regions = list(by_region)
    left.bar(regions, [by_region[r]["revenue"] / 1000 for r in regions],
             color="tab:blue")
    left.set_title("Revenue by region")
    left.set_ylabel("revenue (thousands)")
    products = list(by_product)
    right.bar(products, [by_product[p]["revenue"] / 1000 for p in products],
              color="tab:orange")
    right.set_title("Revenue by product")
    right.tick_params(axis="x", labelrotation=30)
    fig.suptitle(f"Sales {summary['first_date']} to {summary['last_date']}")
    fig.tight_layout()
    fig.savefig("chart.png", dpi=100)

    print(f"{summary['rows']} orders, {summary['total_units']} units, "
          f"revenue {summary['total_revenue']:,.2f}")
    top_region = regions[0]
    top_product = products[0]
    print(f"top region:  {top_region} "
          f"({by_region[top_region]['revenue']:,.2f})")
    print(f"top product: {top_product} "
          f"({by_product[top_product]['revenue']:,.2f})")
    print("wrote summary.json and chart.png")


if __name__ == "__main__":
    main()
