"""Reads rowgate's columnar outputs with the engines users load them into, for test/engines/.

    python3 read_back.py arrow FILE...     Arrow IPC streams: pyarrow.ipc.open_stream, and DuckDB's
                                           arrow scan of the same stream (duckdb.from_arrow)
    python3 read_back.py parquet FILE...   Parquet files: pyarrow.parquet.read_table, and DuckDB's
                                           SELECT * FROM 'FILE'

One process reads every file (starting Python with pyarrow and duckdb costs ~0.5 s). It prints one
JSON line per file and engine: {"engine", "file", "columns": [[name, type], ...], "rows": [...]},
values as the engine hands them to Python, made JSON without losing anything: ints as
{"$int": "digits"} (exact beyond 2^53), floats as {"$float": repr} (repr round-trips a double),
bytes as {"$bytes": hex}, maps and structs as objects, lists as lists.
"""
import json
import sys

import duckdb
import pyarrow as pa
import pyarrow.ipc
import pyarrow.parquet as pq


def plain(v):
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return {"$int": str(v)}
    if isinstance(v, float):
        return {"$float": repr(v)}
    if isinstance(v, (bytes, bytearray, memoryview)):
        return {"$bytes": bytes(v).hex()}
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    raise TypeError(f"no JSON form for a {type(v).__name__}: {v!r}")


def pyarrow_table(table):
    columns = [[f.name, str(f.type)] for f in table.schema]
    return columns, [plain(r) for r in table.to_pylist(maps_as_pydicts="strict")]


def duckdb_relation(rel):
    columns = [[name, str(t)] for name, t in zip(rel.columns, rel.types)]
    return columns, [plain(dict(zip(rel.columns, r))) for r in rel.fetchall()]


def read_arrow(path):
    with pa.ipc.open_stream(path) as reader:
        yield "pyarrow", pyarrow_table(reader.read_all())
    con = duckdb.connect()
    with pa.ipc.open_stream(path) as reader:
        yield "duckdb", duckdb_relation(con.from_arrow(reader))


def read_parquet(path):
    yield "pyarrow", pyarrow_table(pq.read_table(path))
    con = duckdb.connect()
    quoted = path.replace("'", "''")
    yield "duckdb", duckdb_relation(con.sql(f"SELECT * FROM '{quoted}'"))


def main():
    kind, paths = sys.argv[1], sys.argv[2:]
    read = {"arrow": read_arrow, "parquet": read_parquet}[kind]
    for path in paths:
        for engine, (columns, rows) in read(path):
            line = {"engine": engine, "file": path, "columns": columns, "rows": rows}
            sys.stdout.write(json.dumps(line, ensure_ascii=True) + "\n")


if __name__ == "__main__":
    main()
