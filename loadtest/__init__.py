"""Load and chaos harnesses: benchmarks, soaks and the platform fakes they drive.

No production app imports this package; the operator commands that run a harness
(`soak`, `bench_api`, `bench_queue`) import it lazily.
"""
