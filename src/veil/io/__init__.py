"""Reading tables from files, databases and DataFrames; writing releases atomically.

Every read error names the file (and line or column where known) and the fix. Every write goes
to a temporary file beside the target and is renamed into place, so a failure never leaves a
half-written output, and an input file is never overwritten.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from veil._lazy import lazy_names

if TYPE_CHECKING:
    from veil.io._ahead import Behind, ahead, beside, in_order, workers_for_batches
    from veil.io._batches import BatchWriter, TableStream
    from veil.io._content import ContentHash, content_sha256, fingerprint, parts_sha256
    from veil.io._files import (
        TEXT_FORMATS,
        arrow_source,
        is_streamable,
        parquet_bytes,
        parquet_frame,
        unpack,
    )
    from veil.io._folds import (
        Partitions,
        dask_frame,
        dask_modules,
        each_partition,
        fold_batches,
        typed_as_read,
    )
    from veil.io._formulas import escape_formulas
    from veil.io._outputs import (
        OutputSet,
        atomic_open,
        atomic_path,
        check_output,
        explain_os_error,
        output_failure,
        remove_stale_temps,
    )
    from veil.io._read import Readable, check_cells, read
    from veil.io._source import (
        DEFAULT_BATCH_ROWS,
        ENGINES,
        STREAMING_SHARE,
        Engine,
        Source,
        cluster,
        memory_bytes,
    )
    from veil.io._sql import display_source
    from veil.io._write import (
        EXCEL_CELL_CHARS,
        EXCEL_COLUMNS,
        EXCEL_ROWS,
        SPREADSHEETS,
        SUPPORTED_OUTPUTS,
        OutputFormat,
        check_writable,
        output_format,
        write,
        write_table,
    )

#: Where each public name lives: loaded on first use, so that writing a file atomically or
#: reading a SQL row does not load pandas and pyarrow with the table readers.
_LAZY = {
    **dict.fromkeys(
        ("Behind", "ahead", "beside", "in_order", "workers_for_batches"), "veil.io._ahead"
    ),
    **dict.fromkeys(("BatchWriter", "TableStream"), "veil.io._batches"),
    **dict.fromkeys(
        ("ContentHash", "content_sha256", "fingerprint", "parts_sha256"), "veil.io._content"
    ),
    **dict.fromkeys(
        (
            "TEXT_FORMATS",
            "arrow_source",
            "is_streamable",
            "parquet_bytes",
            "parquet_frame",
            "unpack",
        ),
        "veil.io._files",
    ),
    **dict.fromkeys(
        (
            "Partitions",
            "dask_frame",
            "dask_modules",
            "each_partition",
            "fold_batches",
            "typed_as_read",
        ),
        "veil.io._folds",
    ),
    "escape_formulas": "veil.io._formulas",
    **dict.fromkeys(
        (
            "OutputSet",
            "atomic_open",
            "atomic_path",
            "check_output",
            "explain_os_error",
            "output_failure",
            "remove_stale_temps",
        ),
        "veil.io._outputs",
    ),
    **dict.fromkeys(("Readable", "check_cells", "read"), "veil.io._read"),
    **dict.fromkeys(
        (
            "DEFAULT_BATCH_ROWS",
            "ENGINES",
            "STREAMING_SHARE",
            "Engine",
            "Source",
            "cluster",
            "memory_bytes",
        ),
        "veil.io._source",
    ),
    "display_source": "veil.io._sql",
    **dict.fromkeys(
        (
            "EXCEL_CELL_CHARS",
            "EXCEL_COLUMNS",
            "EXCEL_ROWS",
            "SPREADSHEETS",
            "SUPPORTED_OUTPUTS",
            "OutputFormat",
            "check_writable",
            "output_format",
            "write",
            "write_table",
        ),
        "veil.io._write",
    ),
}


__all__ = [
    "DEFAULT_BATCH_ROWS",
    "ENGINES",
    "EXCEL_CELL_CHARS",
    "EXCEL_COLUMNS",
    "EXCEL_ROWS",
    "SPREADSHEETS",
    "STREAMING_SHARE",
    "SUPPORTED_OUTPUTS",
    "TEXT_FORMATS",
    "BatchWriter",
    "Behind",
    "ContentHash",
    "Engine",
    "OutputFormat",
    "OutputSet",
    "Partitions",
    "Readable",
    "Source",
    "TableStream",
    "ahead",
    "arrow_source",
    "atomic_open",
    "atomic_path",
    "beside",
    "check_cells",
    "check_output",
    "check_writable",
    "cluster",
    "content_sha256",
    "dask_frame",
    "dask_modules",
    "display_source",
    "each_partition",
    "escape_formulas",
    "explain_os_error",
    "fingerprint",
    "fold_batches",
    "in_order",
    "is_streamable",
    "memory_bytes",
    "output_failure",
    "output_format",
    "parquet_bytes",
    "parquet_frame",
    "parts_sha256",
    "read",
    "remove_stale_temps",
    "typed_as_read",
    "unpack",
    "workers_for_batches",
    "write",
    "write_table",
]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)
