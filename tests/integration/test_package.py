"""The Debian package, built and installed the way an operator would.

Packs the tests' own build with `cpack -G DEB` when it is configured as the
package wants (prefix /usr, RelWithDebInfo: scripts/test configures it so),
else configures and builds a separate one (prefix /usr) in a temporary
directory first; inspects the archive, installs it on this machine with
dpkg, checks what the operator relies on (the binary, the service account
and its private state directory, the conffile, the unit, the man pages,
`perfship check` on the installed configuration), upgrades, removes and
purges it, and checks that purge leaves nothing behind.

Installing needs root (CI runs as root); the test skips otherwise, and it
also skips on a machine where perfship is already installed or configured,
rather than replacing an operator's setup.
"""
import gzip
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

SRC = harness.SOURCE_DIR
CFG = "/etc/perfship/perfship.cfg"
STATE = "/var/lib/perfship"
UNIT = "/lib/systemd/system/perfship.service"
WANTS = "/etc/systemd/system/multi-user.target.wants/perfship.service"
RUNTIME_PACKAGES = ["libuv1", "libcurl4", "libcjson1", "libconfig9", "zlib1g"]
# Not a library the binary links: Chart.js, read at run time for the report.
DATA_PACKAGES = ["libjs-chart.js"]


def sh(args, check=True, **kw):
    p = subprocess.run(args, capture_output=True, text=True, **kw)
    if check and p.returncode != 0:
        raise AssertionError(f"{' '.join(args)} -> {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p


def installed():
    p = sh(["dpkg-query", "-W", "-f=${Status}", "perfship"], check=False)
    return p.returncode == 0 and "installed" in p.stdout.split()


def user_exists(name):
    return sh(["getent", "passwd", name], check=False).returncode == 0


def group_exists(name):
    return sh(["getent", "group", name], check=False).returncode == 0


def man_text(page_gz):
    """The page rendered as plain text, without hyphenation or justification,
    so that every option appears whole."""
    with gzip.open(page_gz, "rt") as f:
        source = f.read()
    p = sh(["groff", "-man", "-Tutf8", "-ww", "-rHY=0", "-rLL=200n", "-P-cbou"],
           input=source)
    text = p.stdout.replace("\u2010", "-").replace("\u2212", "-")
    return text, p.stderr


def sysexits_codes():
    """The exit codes include/core/sysexits_ps.h names, as sorted strings."""
    with open(os.path.join(SRC, "include", "core", "sysexits_ps.h")) as f:
        codes = re.findall(r"(?m)^#define PS_EXIT_\w+ (\d+)", f.read())
    return sorted(codes, key=int)


def help_options(help_text):
    """Every option spelled in `perfship --help`: -x and --long-name."""
    opts = set(re.findall(r"(?<![\w-])(--?[A-Za-z][A-Za-z0-9-]*)", help_text))
    return sorted(o.rstrip("-") for o in opts)


def help_commands(help_text):
    section = help_text.split("commands:", 1)[1].split("options:", 1)[0]
    return re.findall(r"^  ([a-z]+)\b", section, re.M)


def package_build():
    """The build directory of PERFSHIP_BIN when it was configured as the
    package is (prefix /usr, RelWithDebInfo) from this source tree, else
    None."""
    build = os.path.dirname(os.path.abspath(harness.PERFSHIP_BIN))
    try:
        with open(os.path.join(build, "CMakeCache.txt")) as f:
            cache = dict(re.findall(r"^(\w+):\w+=(.*)$", f.read(), re.M))
    except OSError:
        return None
    same_source = os.path.realpath(cache.get("CMAKE_HOME_DIRECTORY", "")) == os.path.realpath(SRC)
    if (same_source and cache.get("CMAKE_INSTALL_PREFIX") == "/usr"
            and cache.get("CMAKE_BUILD_TYPE") == "RelWithDebInfo"
            and os.path.exists(os.path.join(build, "CPackConfig.cmake"))):
        return build
    return None


class PackageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        for tool in ("cmake", "cpack", "dpkg-deb", "dpkg", "groff"):
            if not shutil.which(tool):
                raise unittest.SkipTest(f"{tool} is missing (scripts/deps --test installs it)")
        if os.geteuid() != 0:
            raise unittest.SkipTest("installing the package needs root (CI runs as root)")
        if installed() or os.path.exists("/etc/perfship") or os.path.exists(STATE) \
                or user_exists("perfship"):
            raise unittest.SkipTest("perfship is already installed or configured on this "
                                    "machine; not replacing it")
        cls.tmp = tempfile.mkdtemp(prefix="perfship-pkg-")
        build = package_build()
        if build:
            # The tests' own build is configured as the package wants it
            # (scripts/test does): packed as it is, not built a second time.
            out = os.path.join(cls.tmp, "pkg")
            sh(["cpack", "-G", "DEB", "--config", os.path.join(build, "CPackConfig.cmake"),
                "-B", out])
        else:
            build = out = os.path.join(cls.tmp, "build")
            sh(["cmake", "-S", SRC, "-B", build, "-DCMAKE_INSTALL_PREFIX=/usr",
                "-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DPERFSHIP_TESTS=OFF"])
            sh(["cmake", "--build", build, "-j", str(os.cpu_count() or 2),
                "--target", "perfship"])
            sh(["cpack", "-G", "DEB"], cwd=build)
        debs = [f for f in os.listdir(out) if f.endswith(".deb")]
        if len(debs) != 1:
            raise AssertionError(f"cpack made {debs!r}, expected one .deb")
        cls.deb = os.path.join(out, debs[0])
        cls.built_bin = os.path.join(build, "perfship")
        cls.extract = os.path.join(cls.tmp, "root")
        sh(["dpkg-deb", "-x", cls.deb, cls.extract])

    @classmethod
    def tearDownClass(cls):
        # Whatever state a failed test left (installed, or removed with its
        # configuration), purge brings the machine back to where it was.
        if hasattr(cls, "deb"):
            sh(["dpkg", "--purge", "perfship"], check=False)
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def install(self, *extra):
        p = sh(["dpkg", "-i", "--force-confdef", "--force-confold", *extra, self.deb],
               env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
        return p.stdout + p.stderr

    # -- the archive -------------------------------------------------------
    def test_1_contents(self):
        listing = sh(["dpkg-deb", "-c", self.deb]).stdout
        paths = {line.split()[-1].lstrip(".") for line in listing.splitlines()}
        for path in ["/usr/bin/perfship", CFG, UNIT,
                     "/usr/share/man/man1/perfship.1.gz",
                     "/usr/share/man/man5/perfship.cfg.5.gz",
                     "/usr/share/doc/perfship/README.md",
                     "/usr/share/perfship/dashboards/"]:
            self.assertIn(path, paths)
        # The whole dashboards tree and every doc page, whatever they hold.
        for top, sub in (("dashboards", "/usr/share/perfship/dashboards"),
                         ("docs", "/usr/share/doc/perfship")):
            root = os.path.join(SRC, top)
            for d, dirs, files in os.walk(root):
                dirs[:] = [x for x in dirs if x != "__pycache__"]
                for f in files:
                    if f.endswith(".pyc"):
                        continue
                    rel = os.path.relpath(os.path.join(d, f), root)
                    if top == "docs" and (os.sep in rel or not f.endswith(".md")):
                        continue
                    self.assertIn(f"{sub}/{rel}", paths)
        self.assertIn("/usr/share/doc/perfship/operations.md", paths)
        # What Debian policy asks of every package's doc folder
        self.assertIn("/usr/share/doc/perfship/copyright", paths)
        self.assertIn("/usr/share/doc/perfship/changelog.Debian.gz", paths)
        with gzip.open(os.path.join(self.extract, "usr/share/doc/perfship/changelog.Debian.gz"),
                       "rt") as f:
            head = f.readline()
        version = sh(["dpkg-deb", "-f", self.deb, "Version"]).stdout.strip()
        self.assertTrue(head.startswith(f"perfship ({version}) "), head)
        # Ownership is root's, whoever built it.
        for line in listing.splitlines():
            self.assertEqual(line.split()[1], "root/root", line)

    def test_2_control(self):
        depends = sh(["dpkg-deb", "-f", self.deb, "Depends"]).stdout
        names = {d.strip().split()[0] for d in depends.split(",")}
        for pkg in RUNTIME_PACKAGES + DATA_PACKAGES + ["adduser"]:
            self.assertIn(pkg, names, depends)
        # Each named package really provides a library the binary needs.
        for pkg in RUNTIME_PACKAGES:
            self.assertEqual(sh(["dpkg-query", "-W", pkg], check=False).returncode, 0,
                             f"{pkg} named in Depends is not a package on this system")
        info = sh(["dpkg-deb", "-I", self.deb]).stdout
        for script in ("postinst", "prerm", "postrm", "conffiles"):
            self.assertIn(script, info)
        ctl = os.path.join(self.tmp, "control")
        sh(["dpkg-deb", "-e", self.deb, ctl])
        with open(os.path.join(ctl, "conffiles")) as f:
            self.assertEqual(f.read().split(), [CFG])
        for script in ("postinst", "prerm", "postrm"):
            self.assertTrue(os.access(os.path.join(ctl, script), os.X_OK), script)
            sh(["sh", "-n", os.path.join(ctl, script)])

    def test_3_man_pages(self):
        help_text = sh([self.built_bin, "--help"]).stdout
        page1, warn1 = man_text(os.path.join(self.extract, "usr/share/man/man1/perfship.1.gz"))
        page5, warn5 = man_text(os.path.join(self.extract, "usr/share/man/man5/perfship.cfg.5.gz"))
        self.assertEqual(warn1, "", "groff warnings in perfship.1")
        self.assertEqual(warn5, "", "groff warnings in perfship.cfg.5")
        opts = help_options(help_text)
        self.assertIn("--config", opts)  # the parser itself works
        missing = [o for o in opts
                   if not re.search(r"(?<![\w-])" + re.escape(o) + r"(?![\w-])", page1)]
        self.assertEqual(missing, [], "options of --help that perfship.1 does not document")
        cmds = help_commands(help_text)
        self.assertIn("run", cmds)
        # SYNOPSIS: one command per line, each line a whole command
        synopsis = page1.split("SYNOPSIS", 1)[1].split("DESCRIPTION", 1)[0]
        lines = [ln.strip() for ln in synopsis.splitlines() if ln.strip()]
        for ln in lines:
            self.assertTrue(ln.startswith("perfship "), f"SYNOPSIS line {ln!r}")
            self.assertLessEqual(len(re.findall(r"(?<![\w-])(?:" + "|".join(cmds) + r")\b",
                                                ln.split("]", 1)[-1])), 2, ln)
        for c in cmds:
            self.assertTrue(any(re.match(r"perfship \[-c FILE\] " + c + r"\b", ln)
                                for ln in lines), f"SYNOPSIS has no line for {c}")
        missing = [c for c in cmds if not re.search(r"(?m)^   " + c + r"\b", page1)]
        self.assertEqual(missing, [], "commands of --help without a section in perfship.1")
        exit_section = page1.split("EXIT STATUS", 1)[1].split("ENVIRONMENT", 1)[0]
        # --help lists every exit code of sysexits_ps.h, and the page each
        help_codes = re.findall(r"(?<![\w-])(\d+) [a-z]", help_text.split("exit codes:", 1)[1])
        self.assertEqual(sorted(help_codes, key=int), sysexits_codes())
        for code in help_codes:
            self.assertRegex(exit_section, r"(?m)^       " + code + r"\s")
        # Every configuration key of perfship.cfg(5).
        for key in ("url", "api", "database", "retention_policy", "username",
                    "password_file", "org", "bucket", "token_file", "gzip",
                    "timeout_ms", "tls_ca_file", "tls_verify", "create_database",
                    "unreachable_deadline_s", "max_points", "max_bytes",
                    "flush_interval_ms", "max_pending_bytes", "rescan_interval_ms",
                    "settle_ms", "max_line_bytes", "start_at", "interval_ms",
                    "state_dir", "tags", "sources", "path", "format",
                    "measurement", "tag_keys", "time_key", "time_unit", "types",
                    "stall_after_s", "log_level"):
            if not re.search(r"(?m)^       (\S+\.)?" + key + r" \(", page5):
                self.fail(f"perfship.cfg.5 does not describe {key}")
        if shutil.which("man"):
            p = sh(["man", "-l", os.path.join(self.extract, "usr/share/man/man1/perfship.1.gz")],
                   env=dict(os.environ, MANPAGER="cat", PAGER="cat"))
            self.assertIn("EXIT STATUS", p.stdout)

    def test_3b_lintian(self):
        """lintian, errors and warnings: none, beyond the overrides the
        package ships (packaging/debian/lintian-overrides, each with its
        reason)."""
        if not shutil.which("lintian"):
            self.skipTest("lintian is missing")
        p = sh(["lintian", "--fail-on", "error,warning", "--display-level", ">=warning",
                "--tag-display-limit", "0", self.deb], check=False)
        tags = [ln for ln in p.stdout.splitlines() if re.match(r"^[EW]: ", ln)]
        self.assertEqual(tags, [], p.stdout + p.stderr)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_4_unit_hardening(self):
        if not shutil.which("systemd-analyze"):
            self.skipTest("systemd-analyze is missing")
        unit = os.path.join(self.extract, UNIT.lstrip("/"))
        p = sh(["systemd-analyze", "security", "--offline=true", "--no-pager", unit],
               check=False)
        if "--offline" in p.stderr:
            self.skipTest("systemd-analyze has no --offline")
        m = re.search(r"Overall exposure level for perfship.service: ([0-9.]+)", p.stdout)
        self.assertIsNotNone(m, p.stdout + p.stderr)
        # systemd rates <= 2.0 "OK"; the unit's hardening must keep it there.
        self.assertLessEqual(float(m.group(1)), 2.0, p.stdout)

    def test_4b_syscalls_inside_unit_filter(self):
        """Every system call the agent makes (service mode with a reload and a
        stop, gzip, a host name to resolve) is allowed by the unit's
        SystemCallFilter=; a call outside it would fail with EPERM only under
        systemd, where no other test runs the agent."""
        for tool in ("strace", "systemd-analyze"):
            if not shutil.which(tool):
                self.skipTest(f"{tool} is missing")
        with open(os.path.join(self.extract, UNIT.lstrip("/"))) as f:
            filters = re.findall(r"(?m)^SystemCallFilter=(.*)$", f.read())
        listing = sh(["systemd-analyze", "syscall-filter"]).stdout
        groups, cur = {}, None
        for line in listing.splitlines():
            if line.startswith("@"):
                cur = groups.setdefault(line.split()[0], [])
            elif cur is not None and line.strip() and not line.strip().startswith("#"):
                cur.append(line.split()[0])

        def expand(names):
            out = set()
            for n in names:
                out |= expand(groups.get(n, [])) if n.startswith("@") else {n}
            return out
        allowed, denied = set(), set()
        for f in filters:
            if f.startswith("~"):
                denied |= expand(f[1:].split())
            else:
                allowed |= expand(f.split())
        self.assertTrue(allowed, "the unit has no SystemCallFilter allow list")
        allowed -= denied

        work = tempfile.mkdtemp(dir=self.tmp)
        os.makedirs(os.path.join(work, "res"))
        with open(os.path.join(work, "res", "a.jsonl"), "w") as f:
            f.write('{"ts": 1700000000, "v": 1}\n')
        trace = os.path.join(work, "trace")
        with harness.InfluxServer() as influx:
            cfg = harness.write_config(
                os.path.join(work, "a.cfg"), f"http://localhost:{influx.port}",
                os.path.join(work, "state"), influx_extra='gzip = "on";',
                sources=f'{{ path = "{work}/res"; format = "jsonl"; time_key = "ts"; }}')
            log = open(os.path.join(work, "agent.log"), "wb")
            self.addCleanup(log.close)
            proc = subprocess.Popen(["strace", "-f", "-qq", "-o", trace,
                                     self.built_bin, "-c", cfg, "run"],
                                    stdout=log, stderr=subprocess.STDOUT)
            try:
                def shipped():
                    try:
                        return influx.count("perf", "jsonl") == 1
                    except harness.DatabaseNotFound:  # not created yet
                        return False
                harness.wait_until(shipped, timeout=30, what="the point in InfluxDB")
                agent = int(sh(["pgrep", "-P", str(proc.pid)]).stdout.split()[0])
                os.kill(agent, signal.SIGHUP)
                time.sleep(0.5)
                os.kill(agent, signal.SIGTERM)
                proc.wait(30)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        with open(trace) as f:
            calls = re.findall(r"(?m)^\d+\s+([a-z_0-9]+)\((.*)$", f.read())
        used = {name for name, _ in calls}
        self.assertIn("execve", used, "strace saw no system call")
        self.assertEqual(sorted(used - allowed), [],
                         "system calls the unit's SystemCallFilter= would refuse")
        # The same for RestrictAddressFamilies=.
        with open(os.path.join(self.extract, UNIT.lstrip("/"))) as f:
            families = set(re.search(r"(?m)^RestrictAddressFamilies=(.*)$",
                                     f.read()).group(1).split())
        opened = {args.split(",")[0] for name, args in calls if name == "socket"}
        self.assertIn("AF_INET", opened)
        self.assertEqual(sorted(opened - families), [],
                         "socket families the unit's RestrictAddressFamilies= would refuse")

    # -- on this machine ---------------------------------------------------
    def test_5_install_use_upgrade_remove_purge(self):
        out = self.install()
        self.assertTrue(installed())
        # The sample is unedited: enabled, not started, and told what to do.
        self.assertIn("edit /etc/perfship/perfship.cfg", out)

        self.assertRegex(sh(["/usr/bin/perfship", "--version"]).stdout, r"^perfship \d")
        self.assertTrue(user_exists("perfship"))
        st = os.stat(STATE)
        pw = pwd.getpwnam("perfship")
        self.assertEqual((st.st_uid, st.st_gid), (pw.pw_uid, pw.pw_gid))
        # others pass through to the report's folder, never list or read
        self.assertEqual(st.st_mode & 0o777, 0o751)
        self.assertIn(pw.pw_shell, ("/usr/sbin/nologin", "/sbin/nologin", "/bin/false"))
        self.assertLess(pw.pw_uid, 1000, "not a system account")
        # The account can write its state; another unprivileged user cannot
        # even look inside.
        if shutil.which("setpriv"):
            sh(["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--clear-groups",
                "touch", os.path.join(STATE, "probe")])
            p = sh(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                    "ls", STATE], check=False)
            self.assertNotEqual(p.returncode, 0)
        if shutil.which("deb-systemd-helper"):
            self.assertEqual(os.readlink(WANTS), UNIT, "unit not enabled")
        self.assertTrue(os.path.exists("/usr/share/man/man1/perfship.1.gz"))

        if shutil.which("systemd-analyze"):
            p = sh(["systemd-analyze", "verify", UNIT], check=False)
            complaints = [ln for ln in p.stderr.splitlines() if "perfship" in ln]
            self.assertEqual(complaints, [], p.stderr)
            self.assertEqual(p.returncode, 0, p.stderr)

        self.check_installed_config()
        if shutil.which("setpriv"):
            self.run_as_service_account(pw)

        # Upgrade (same version again): the edited conffile is kept.
        with open(CFG, "a") as f:
            f.write("# edited by the operator\n")
        out = self.install()
        with open(CFG) as f:
            self.assertIn("# edited by the operator", f.read())
        self.assertNotIn("edit /etc/perfship/perfship.cfg", out)

        # Remove: the program goes; configuration, offsets and account stay.
        sh(["dpkg", "-r", "perfship"])
        self.assertFalse(os.path.exists("/usr/bin/perfship"))
        self.assertFalse(os.path.exists(UNIT))
        self.assertTrue(os.path.exists(CFG))
        self.assertTrue(os.path.exists(os.path.join(STATE, "probe")) or
                        not shutil.which("setpriv"))
        self.assertTrue(user_exists("perfship"))

        # Purge: nothing is left.
        sh(["dpkg", "--purge", "perfship"])
        self.assertFalse(installed())
        for path in ("/etc/perfship", STATE, UNIT, WANTS, "/usr/bin/perfship",
                     "/usr/share/perfship", "/usr/share/doc/perfship",
                     "/usr/share/man/man1/perfship.1.gz"):
            self.assertFalse(os.path.lexists(path), f"{path} left after purge")
        self.assertFalse(user_exists("perfship"), "user left after purge")
        self.assertFalse(group_exists("perfship"), "group left after purge")

        # A configuration placed before the package (configuration
        # management) is kept and counts as edited: no "edit it first" hint
        # (with systemd running, postinst starts the service instead).
        os.makedirs("/etc/perfship")
        with open(os.path.join(self.extract, CFG.lstrip("/"))) as f:
            placed = f.read() + "# placed by configuration management\n"
        with open(CFG, "w") as f:
            f.write(placed)
        out = self.install()
        self.assertNotIn("edit /etc/perfship/perfship.cfg", out)
        with open(CFG) as f:
            self.assertEqual(f.read(), placed)
        sh(["dpkg", "--purge", "perfship"])
        self.assertFalse(os.path.lexists("/etc/perfship"))

    def run_as_service_account(self, pw):
        """The installed agent, as the perfship account (what the unit runs),
        ships a result file into a real influxd and keeps its offsets in the
        package's state directory; a result directory it may not read is
        named in its log, as operations.md promises."""
        results = os.path.join(self.tmp, "results")
        os.makedirs(results)
        os.chmod(self.tmp, 0o755)
        os.chmod(results, 0o755)
        with open(os.path.join(results, "app.jsonl"), "w") as f:
            f.write('{"ts": 1700000000, "stage": "warmup", "latency": 1.5}\n'
                    '{"ts": 1700000001, "stage": "load", "latency": 2.25}\n')
        os.chmod(os.path.join(results, "app.jsonl"), 0o644)
        private = os.path.join(self.tmp, "private")
        os.makedirs(private, mode=0o700)
        with open(os.path.join(private, "app.jsonl"), "w") as f:
            f.write('{"ts": 1700000002, "stage": "x", "latency": 9}\n')
        as_perfship = ["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}",
                       "--clear-groups"]
        with harness.InfluxServer() as influx:
            cfg = harness.write_config(
                os.path.join(self.tmp, "agent.cfg"), influx.url, STATE,
                sources=f'{{ path = "{results}"; format = "jsonl"; measurement = "pkg"; '
                        f'tag_keys = ["stage"]; time_key = "ts"; }}, '
                        f'{{ path = "{private}"; format = "jsonl"; time_key = "ts"; }}')
            os.chmod(cfg, 0o644)
            # JOURNAL_STREAM as systemd sets it: the unit's SyslogLevelPrefix=
            # relies on every line starting with its "<N>" priority.
            p = sh(as_perfship + ["/usr/bin/perfship", "-c", cfg, "run", "--once"],
                   check=False, timeout=60,
                   env=dict(os.environ, JOURNAL_STREAM="8:12345"))
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            lines = p.stderr.splitlines()
            self.assertTrue(lines)
            self.assertEqual([ln for ln in lines if not re.match(r"<[3-7]>\S", ln)], [])
            self.assertRegex(p.stderr, r"(?m)^<4>.*permission denied")
            rows = influx.query("perf", 'SELECT "latency" FROM "pkg" GROUP BY "stage"')
            self.assertEqual(sorted((r["stage"], r["latency"]) for r in rows),
                             [("load", 2.25), ("warmup", 1.5)])
            self.assertRegex(p.stderr, "(?i)" + re.escape(private) + r".*permission denied")
            owners = {os.stat(os.path.join(STATE, f)).st_uid for f in os.listdir(STATE)}
            self.assertEqual(owners, {pw.pw_uid}, "state not written by the account")
            st = sh(["/usr/bin/perfship", "-c", cfg, "status"]).stdout
            self.assertRegex(st, re.escape(os.path.join(results, "app.jsonl")) +
                             r".* 0 bytes behind")

    def check_installed_config(self):
        """The installed configuration is valid; pointed at a real server,
        `check` succeeds."""
        p = sh(["/usr/bin/perfship", "-c", CFG, "check"], check=False, timeout=60)
        # 78 would mean the package installs a configuration its own agent
        # rejects. Otherwise 69 (nothing at the sample's URL), or 0 if a
        # server happens to answer there; any other code is a defect.
        self.assertNotEqual(p.returncode, 78, "the installed configuration is invalid:\n"
                            + p.stderr)
        self.assertIn(p.returncode, (0, 69), p.stdout + p.stderr)
        with open(CFG) as f:
            text = f.read()
        with harness.InfluxServer() as influx:
            copy = os.path.join(self.tmp, "check.cfg")
            state = os.path.join(self.tmp, "state")
            os.makedirs(state, exist_ok=True)
            text, n = re.subn(r'(?m)^(\s*url\s*=\s*)"[^"]*"', r'\1"' + influx.url + '"',
                              text, count=1)
            self.assertEqual(n, 1, "no influxdb url in the installed configuration")
            text = re.sub(r'(?m)^(\s*state_dir\s*=\s*)"[^"]*"', r'\1"' + state + '"', text)
            with open(copy, "w") as f:
                f.write(text)
            db = re.search(r'(?m)^\s*database\s*=\s*"([^"]*)"', text)
            influx.create_db(db.group(1) if db else "perf")
            p = sh(["/usr/bin/perfship", "-c", copy, "check"], check=False, timeout=60)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertIn("check: ok", p.stdout)
            # The same file with the server gone: unreachable, not a config error.
            influx.stop()
            p = sh(["/usr/bin/perfship", "-c", copy, "check"], check=False, timeout=60)
            self.assertEqual(p.returncode, 69, p.stdout + p.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
