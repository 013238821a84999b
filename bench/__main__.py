"""python3 -m bench: the benchmarks (bench/run.py)."""
from bench.run import main

main()
