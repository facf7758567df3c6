"""Runs SDV's synthesizers in their own environment (SDV is BUSL-licensed: never a veil
dependency; `make bench-synth` builds .venv-sdv). Called by bench_synth_peers.py:

    .venv-sdv/bin/python bench/sdv_runner.py DIR SEED METHOD [METHOD...]

reads DIR/train.csv, fits each METHOD (gaussian_copula, tvae, ctgan) with SDV's defaults and
its detected metadata (a column typed by its name as something else but holding at most 50
values made a category), samples as many rows as the training table, writes DIR/sdv_METHOD.csv,
and prints one JSON line of each method's fit + sample wall and CPU seconds.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch


def main() -> None:
    folder, seed, methods = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    from sdv.metadata import Metadata
    from sdv.single_table import CTGANSynthesizer, GaussianCopulaSynthesizer, TVAESynthesizer

    makers = {
        "gaussian_copula": GaussianCopulaSynthesizer,
        "tvae": TVAESynthesizer,
        "ctgan": CTGANSynthesizer,
    }
    train = pd.read_csv(folder / "train.csv")
    metadata = Metadata.detect_from_dataframes({"table": train})
    # SDV types some columns by their names: the insurance table's Driving_License (0 or 1)
    # came back as a fake licence number in every row. A column SDV calls anything but a
    # number, category, date or yes/no that holds at most 50 values is a category.
    for name, column in metadata.tables["table"].columns.items():
        plain = {"numerical", "categorical", "datetime", "boolean"}
        if column["sdtype"] not in plain and train[name].nunique() <= 50:
            metadata.update_column(name, table_name="table", sdtype="categorical")
    seconds = {}
    for method in methods:
        np.random.seed(seed)
        torch.manual_seed(seed)
        wall, cpu = time.perf_counter(), time.process_time()
        synthesizer = makers[method](metadata)
        synthesizer.fit({"table": train})
        synthetic = synthesizer.sample(num_rows=len(train))["table"]
        seconds[method] = [time.perf_counter() - wall, time.process_time() - cpu]
        synthetic.to_csv(folder / f"sdv_{method}.csv", index=False)
    print(json.dumps(seconds))


if __name__ == "__main__":
    main()
