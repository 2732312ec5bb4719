#!/usr/bin/env python3
"""Generate examples/sales.csv, the demo data set, deterministically.

The output is committed; rerun this script only to change the data set:

    /usr/bin/python3 examples/make_sales_csv.py > examples/sales.csv

Same seed, same Python major version -> same bytes.
"""

import csv
import datetime
import random
import sys

SEED = 20240501
ROWS = 3000

REGIONS = ["North", "South", "East", "West", "Central"]
# product -> (list price, typical units per order)
PRODUCTS = {
    "Widget": (19.99, 12),
    "Gadget": (49.50, 6),
    "Gizmo": (7.25, 30),
    "Doohickey": (129.00, 2),
    "Sprocket": (3.10, 60),
    "Thingamajig": (89.95, 3),
}
# regional demand multipliers so the chart is not flat
REGION_WEIGHT = {"North": 1.3, "South": 0.8, "East": 1.1, "West": 1.5,
                 "Central": 0.6}


def main() -> None:
    rng = random.Random(SEED)
    start = datetime.date(2024, 1, 1)
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(["date", "region", "product", "units", "unit_price",
                     "revenue"])
    rows = []
    for _ in range(ROWS):
        day = start + datetime.timedelta(days=rng.randrange(366))
        region = rng.choices(REGIONS,
                             weights=[REGION_WEIGHT[r] for r in REGIONS])[0]
        product = rng.choice(list(PRODUCTS))
        price, typical = PRODUCTS[product]
        units = max(1, round(rng.gauss(typical, typical / 3)))
        # occasional discount, in whole cents
        cents = round(price * 100 * rng.choice([1.0, 1.0, 1.0, 0.95, 0.9]))
        revenue_cents = units * cents
        rows.append((day, region, product, units, cents, revenue_cents))
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    for day, region, product, units, cents, revenue_cents in rows:
        writer.writerow([day.isoformat(), region, product, units,
                         f"{cents // 100}.{cents % 100:02d}",
                         f"{revenue_cents // 100}.{revenue_cents % 100:02d}"])


if __name__ == "__main__":
    main()
