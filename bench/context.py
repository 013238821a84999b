"""One benchmark session: the binary measured, its own InfluxDB, a scratch
directory, and the configurations the agent is run with."""
import os
import subprocess
import tempfile

import harness  # tests/integration, on the path by bench/__init__.py

from bench import BUILD, ROOT
from bench.measure import proc_cpu


def build():
    """The Release binary (and the verdict engine's bench tool) in
    build-release/; returns the binary's path."""
    subprocess.run(["cmake", "-S", ROOT, "-B", BUILD, "-DCMAKE_BUILD_TYPE=Release"],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", BUILD, "-j", str(os.cpu_count() or 2),
                    "--target", "perfship", "bench_verdicts"], check=True,
                   stdout=subprocess.DEVNULL)
    return os.path.join(BUILD, "perfship")


class Bench:
    def __init__(self, args, binary):
        self.args = args
        self.bin = binary
        self.influx = None
        self.tmp = tempfile.mkdtemp(prefix="perfship-bench-")
        self.seq = 0
        # convert reads /etc/perfship/perfship.cfg when no -c is given: the
        # benchmark names its own (the global tag the agent's points carry)
        self.convert_cfg = os.path.join(self.tmp, "convert.cfg")
        with open(self.convert_cfg, "w") as f:
            f.write(f'state_dir = "{self.tmp}";\ntags = {{ host = "bench"; }};\n')

    def tool(self, name):
        """A test tool of the build the measured binary comes from."""
        return os.path.join(os.path.dirname(self.bin), "tests", "tools", name)

    def start_influx(self):
        self.influx = harness.InfluxServer().start()

    def close(self):
        if self.influx:
            self.influx.close()

    def fresh_db(self, tag):
        self.seq += 1
        db = f"b{self.seq}_{tag}"
        self.influx.create_db(db)
        return db

    def drop(self, db):
        self.influx.query_raw(f'DROP DATABASE "{db}"')

    def influx_cpu(self):
        return proc_cpu(self.influx.proc.pid)

    def config(self, db, sources, gzip="off", extra="", batch=""):
        state = tempfile.mkdtemp(dir=self.tmp, prefix="state-")
        path = os.path.join(state, "perfship.cfg")
        harness.write_config(path, self.influx.url, state, sources=sources, database=db,
                             influx_extra=f'gzip = "{gzip}";',
                             extra=extra + (f"batch = {{ {batch} }};" if batch else ""))
        # the plain client's LP carries host=bench, so the agent's points do too
        with open(path) as f:
            text = f.read().replace('host = "test"', 'host = "bench"')
        with open(path, "w") as f:
            f.write(text)
        return path

    def count(self, db, measurement="bench", field="rps"):
        return self.influx.count(db, measurement, field)
