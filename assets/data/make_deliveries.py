#!/usr/bin/env python3
"""Writes deliveries.csv: 200 past deliveries scattered around the true model.

    minutes = 5 + 2*distance_km + 10*congestion - 2*express_lane + noise

Run by hand (never in the build): python3 assets/data/make_deliveries.py
Deterministic: the same seed writes the same file, byte for byte.
"""
import random

SEED, ROWS, NOISE_SD = 7, 200, 1.0
rng = random.Random(SEED)
with open(__file__.replace("make_deliveries.py", "deliveries.csv"), "w") as f:
    f.write("distance_km,congestion,express_lane,minutes\n")
    for _ in range(ROWS):
        d = round(rng.uniform(0.5, 20.0), 2)
        c = round(rng.uniform(0.0, 1.0), 2)
        e = 1 if rng.random() < 0.3 else 0
        m = 5 + 2 * d + 10 * c - 2 * e + rng.gauss(0, NOISE_SD)
        f.write(f"{d},{c},{e},{m:.2f}\n")
