#!/usr/bin/env python3
"""What the list-query benchmark's queries would cost pushed down to SQLite.

The same 100,000 people as `scripts/bench queries` (QueryBenchmark.configuration), in an in-memory
SQLite database with indexes on the filtered and sorted fields. Prints microseconds per query.
Usage: python3 Benchmarks/QueryPushdown/pushdown.py
"""
import sqlite3
import time

NAMES = ["amy", "bob", "carl", "dora", "eve", "frank", "gus", "hana", "ivan", "june", "kai", "lena"]


def main():
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE people (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT, "
               "numberOfKids INTEGER, kilometersWalked REAL)")
    db.executemany(
        "INSERT INTO people (name, numberOfKids, kilometersWalked) VALUES (?, ?, ?)",
        [(f"{NAMES[(i * 7) % 12]} {i}", i % 5, (i % 1000) / 4) for i in range(100_000)])
    db.execute("CREATE INDEX people_kids ON people (numberOfKids)")
    db.execute("CREATE INDEX people_name ON people (name)")
    db.commit()

    def measure(label, sql, arguments, runs=300):
        start = time.perf_counter()
        for _ in range(runs):
            db.execute(sql, arguments).fetchall()
        print(f"{label}: {(time.perf_counter() - start) / runs * 1e6:.0f} µs")

    measure("equality page", "SELECT * FROM people WHERE numberOfKids = ? ORDER BY id LIMIT 20 OFFSET 80", (3,))
    measure("equality count", "SELECT count(*) FROM people WHERE numberOfKids = ?", (3,))
    measure("sort page", "SELECT * FROM people ORDER BY name, id LIMIT 20 OFFSET 80", ())
    measure("search page", "SELECT * FROM people WHERE name LIKE ? ORDER BY id LIMIT 20", ("%amy%",))
    measure("search count", "SELECT count(*) FROM people WHERE name LIKE ?", ("%amy%",), runs=30)


if __name__ == "__main__":
    main()
