"""perfship run by root and by the service's own user on the same machine.

The packaged service runs as `perfship` with its state in a directory that
user owns; an operator may still run `perfship run --once` as root there.
Checked against a real InfluxDB with the real binary, the unprivileged user
played by uid 65534 through setpriv:
- after a root run, the service's user can take the state over (no exit 78)
  and ships what came since, nothing lost and nothing twice;
- a source folder that user may not read is named with the permission
  advice, not the inotify limit.
Needs root and setpriv; skipped otherwise.
"""
import os
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import PERFSHIP_BIN, InfluxTestCase, run_perfship, write_config  # noqa: E402

USER = 65534
DB = "perf"
AS_USER = ["setpriv", f"--reuid={USER}", f"--regid={USER}", "--clear-groups"]


def line(i):
    return '{"ts": %d, "v": %d}\n' % (1700000000 + i, i)


def run_as_user(args, timeout=60):
    p = subprocess.run(AS_USER + [PERFSHIP_BIN] + list(args), capture_output=True,
                       text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


@unittest.skipUnless(os.geteuid() == 0 and shutil.which("setpriv"),
                     "needs root and setpriv to play two users")
class RunAsUsers(InfluxTestCase):
    tmp_prefix = "perfship-users-"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        os.chmod(cls.tmp, 0o755)  # the other user passes through

    def setup_dirs(self, name, src_mode=0o755):
        base = os.path.join(self.tmp, name)
        src, state = os.path.join(base, "src"), os.path.join(base, "state")
        os.makedirs(src)
        os.makedirs(state)
        os.chmod(base, 0o755)
        os.chmod(src, src_mode)
        os.chown(state, USER, USER)
        os.chmod(state, 0o700)
        cfg = write_config(os.path.join(base, "perfship.cfg"), self.influx.url, state,
                           sources='{ path = "%s"; format = "jsonl"; time_key = "ts"; '
                                   'measurement = "%s"; }' % (src, name),
                           database=DB)
        os.chmod(cfg, 0o644)
        return src, state, cfg

    def values(self, measurement):
        rows = self.influx.query(DB, f'SELECT v FROM "{measurement}"')
        return sorted(r["v"] for r in rows)

    def test_service_user_takes_over_after_a_root_run(self):
        src, state, cfg = self.setup_dirs("after_root")
        data = os.path.join(src, "a.jsonl")
        with open(data, "w") as f:
            f.write("".join(line(i) for i in range(3)))
        os.chmod(data, 0o644)
        rc, _, err = run_perfship(["-c", cfg, "run", "--once"], timeout=60)
        self.assertEqual(rc, 0, err)
        for name in os.listdir(state):
            st = os.lstat(os.path.join(state, name))
            self.assertEqual(st.st_uid, USER, f"{name} was left to uid {st.st_uid}")
        with open(data, "a") as f:
            f.write("".join(line(i) for i in range(3, 5)))
        rc, _, err = run_as_user(["-c", cfg, "run", "--once"])
        self.assertEqual(rc, 0, err)
        self.assertEqual(self.values("after_root"), [0, 1, 2, 3, 4])
        rc, out, err = run_as_user(["-c", cfg, "status"])
        self.assertEqual(rc, 0, err)
        size = os.path.getsize(data)
        self.assertIn(f"{data}  offset {size} of {size}", out)

    def test_unreadable_source_names_the_permission(self):
        src, state, cfg = self.setup_dirs("unreadable", src_mode=0o700)
        with open(os.path.join(src, "a.jsonl"), "w") as f:
            f.write(line(0))
        rc, _, err = run_as_user(["-c", cfg, "run", "--once"])
        self.assertEqual(rc, 0, err)
        self.assertIn(f"{src}: cannot list (Permission denied); give perfship's user "
                      "read and search permission on it", err)
        self.assertNotIn("max_user_watches", err)
        self.assertEqual(self.values("unreadable"), [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
