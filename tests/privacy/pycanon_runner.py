"""Runs inside .venv-pycanon (pycanon pins its own numpy/pandas): prints pycanon's values.

python pycanon_runner.py SPEC.json   # [{"csv", "sep", "qi": [...], "sa": "...", "l": 2}, ...]
"""

import json
import sys

import pandas as pd
from pycanon import anonymity

with open(sys.argv[1]) as spec:
    cases = json.load(spec)
results = []
for case in cases:
    data = pd.read_csv(case["csv"], sep=case.get("sep", ","))
    qi, sa = case["qi"], case.get("sa")
    row = {"k": int(anonymity.k_anonymity(data, qi))}
    if sa:
        row["l_distinct"] = int(anonymity.l_diversity(data, qi, [sa]))
        row["l_entropy"] = int(anonymity.entropy_l_diversity(data, qi, [sa]))
        row["t"] = float(anonymity.t_closeness(data, qi, [sa]))
    results.append(row)
print(json.dumps(results))
