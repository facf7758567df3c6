"""Runs SDV's synthesizers in their own environment (SDV is BUSL-licensed: never a veil
dependency; `make bench-synth` builds .venv-sdv). Called by bench_synth_peers.py:

    .venv-sdv/bin/python bench/sdv_runner.py DIR SEED METHOD [METHOD...]

reads DIR/train.csv, fits each METHOD (gaussian_copula, tvae, ctgan) with SDV's defaults and
its detected metadata, samples as many rows as the training table, writes DIR/sdv_METHOD.csv,
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
