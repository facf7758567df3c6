"""Runs in Presidio's own environment (.venv-presidio): time presidio-structured's
PandasAnalysisBuilder on row samples of a table, regex recognizers only.

    python presidio_runner.py TABLE.parquet '[1000, 10000]' BUDGET_SECONDS
    python presidio_runner.py --text CELLS.json

Prints one JSON line per sample size: {"n", "seconds", "mapping": {column: entity}}. Stops
before a size whose extrapolated time would exceed the budget. With --text: Presidio's
AnalyzerEngine on each cell of a JSON list of texts, one JSON line {"seconds", "found":
[[[entity, start, end], ...] per cell]} (every result, whatever its score).
"""

from __future__ import annotations

import json
import sys
import time

import pandas as pd
import tldextract
from presidio_analyzer import AnalyzerEngine
from presidio_analyzer.nlp_engine import NoOpNlpEngine
from presidio_structured import PandasAnalysisBuilder

# Presidio's e-mail recognizer calls tldextract, which would fetch the public suffix list
# from the network; use the snapshot it ships with (this machine has no internet).
tldextract.tldextract.TLD_EXTRACTOR = tldextract.TLDExtract(suffix_list_urls=())


def analyzer() -> AnalyzerEngine:
    engine = NoOpNlpEngine(models=[{"lang_code": "en", "model_name": "none"}])
    return AnalyzerEngine(nlp_engine=engine, supported_languages=["en"])


def text_mode(path: str) -> None:
    with open(path, encoding="utf-8") as handle:
        cells = json.load(handle)
    engine = analyzer()
    engine.analyze("warm up on 0712 345 678", language="en")
    start = time.perf_counter()
    found = [
        [[r.entity_type, r.start, r.end] for r in engine.analyze(text, language="en")]
        for text in cells
    ]
    print(json.dumps({"seconds": time.perf_counter() - start, "found": found}), flush=True)


def main() -> None:
    if sys.argv[1] == "--text":
        text_mode(sys.argv[2])
        return
    table = pd.read_parquet(sys.argv[1])
    # Presidio accepts only Python primitives: dates as ISO text, numpy scalars as Python ones
    for name in table.columns:
        if pd.api.types.is_datetime64_any_dtype(table[name]):
            table[name] = table[name].dt.strftime("%Y-%m-%d")
    table = pd.DataFrame({name: table[name].tolist() for name in table.columns})
    samples = json.loads(sys.argv[2])
    budget = float(sys.argv[3])
    builder = PandasAnalysisBuilder(analyzer=analyzer())
    builder.generate_analysis(table.head(50), n=50)  # warm-up: recognizer loading
    per_row = None
    for n in samples:
        if per_row is not None and per_row * n > budget:
            break
        start = time.perf_counter()
        analysis = builder.generate_analysis(table, n=n)
        seconds = time.perf_counter() - start
        per_row = seconds / n
        print(
            json.dumps({"n": n, "seconds": seconds, "mapping": analysis.entity_mapping}), flush=True
        )


if __name__ == "__main__":
    main()
